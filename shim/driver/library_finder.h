// File: shim/driver/library_finder.h
//
// Finds libcupti and libcuda at run time. numtrace never links either: the
// job may bring its own CUPTI (PyTorch wheels ship libcupti.so.13) and only
// one copy may be live in a process, so an already loaded copy always wins.
// The search order is a pure function of the inputs below, so tests drive it
// with fake files in temporary folders.
//
// CUPTI order:
//   1. a libcupti.so* already loaded in the process (by path)
//   2. $NUMTRACE_CUPTI_LIB
//   3. $CUDA_HOME/lib64, $CUDA_HOME/extras/CUPTI/lib64
//   4. /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64
//   5. beside an already loaded libtorch*/libc10_cuda/libcudart: PyTorch's
//      bundled copy (site-packages/nvidia/cuda_cupti/lib, nvidia/cu13/lib)
//   6. the loader's own search path ("libcupti.so.13", "libcupti.so")
//
// Example:
//   LibrarySearch in{.env_override = "", .cuda_home = "/opt/cuda",
//                    .loaded = LoadedLibraryPaths()};
//   for (const std::string& path : CuptiCandidates(in)) ...
//   LoadedLibrary lib = OpenFirst(CuptiCandidates(in));  // lib.handle, lib.path
#ifndef NUMTRACE_SHIM_DRIVER_LIBRARY_FINDER_H_
#define NUMTRACE_SHIM_DRIVER_LIBRARY_FINDER_H_

#include <string>
#include <utility>
#include <vector>

namespace numtrace::shim {

struct LibrarySearch {
  std::string env_override;         // NUMTRACE_CUPTI_LIB (empty: unset)
  std::string cuda_home;            // $CUDA_HOME (empty: unset)
  std::string default_cuda_home = "/usr/local/cuda";
  std::vector<std::string> loaded;  // paths of the objects loaded in the process
};

// Fills a LibrarySearch from the environment and dl_iterate_phdr.
LibrarySearch LibrarySearchFromProcess(const char* override_env);

// Paths of every object currently loaded in the process.
std::vector<std::string> LoadedLibraryPaths();

// Ordered, de-duplicated candidates. Absolute paths are listed only when the
// file exists; the final entries are bare sonames for the loader.
std::vector<std::string> CuptiCandidates(const LibrarySearch& in);
std::vector<std::string> DriverCandidates(const LibrarySearch& in);

struct LoadedLibrary {
  void* handle = nullptr;  // dlopen handle; null when nothing loaded
  std::string path;        // the candidate that loaded
  std::string tried;       // "a: why; b: why" for the one-line failure message
};

// dlopens the first candidate that loads (RTLD_NOW | RTLD_LOCAL).
LoadedLibrary OpenFirst(const std::vector<std::string>& candidates);

// The versions of the CUDA libraries already loaded among `loaded`
// (environment keys cuda.runtime, cublas.version, cudnn.version,
// nccl.version, "12.9.1"), each asked of the loaded copy through its own
// version query (cudaRuntimeGetVersion, cublasGetProperty, cudnnGetProperty,
// ncclGetVersion), which creates no context or handle; a library not
// loaded is never loaded (RTLD_NOLOAD) and its key stays absent.
std::vector<std::pair<std::string, std::string>> LoadedLibraryVersions(const std::vector<std::string>& loaded);
// The version numbers as the libraries encode them: 12040 -> "12.4";
// NCCL's 22703 -> "2.27.3" (and 2.8's 2804 -> "2.8.4").
std::string CudaRuntimeVersionText(int v);
std::string NcclVersionText(int v);

// True when a shared object whose file name starts with `prefix` (e.g.
// "libcuda.so") is already loaded; never loads anything.
bool IsLoaded(const std::vector<std::string>& loaded, const std::string& prefix);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DRIVER_LIBRARY_FINDER_H_
