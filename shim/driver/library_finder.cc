// File: shim/driver/library_finder.cc
//
// Search order for libcupti/libcuda; see library_finder.h.
#include "shim/driver/library_finder.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

namespace numtrace::shim {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

void AddIfExists(std::vector<std::string>& out, const std::string& path) {
  if (FileExists(path) && std::find(out.begin(), out.end(), path) == out.end()) {
    out.push_back(path);
  }
}

// The versioned soname first: a bare libcupti.so is a development link that
// may point at another toolkit's copy.
void AddFromDir(std::vector<std::string>& out, const std::string& dir, const char* stem) {
  if (dir.empty()) return;
  AddIfExists(out, dir + "/" + stem + ".13");
  AddIfExists(out, dir + "/" + stem);
}

int CollectPath(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') out->emplace_back(info->dlpi_name);
  return 0;
}

}  // namespace

std::vector<std::string> LoadedLibraryPaths() {
  std::vector<std::string> paths;
  dl_iterate_phdr(&CollectPath, &paths);
  return paths;
}

LibrarySearch LibrarySearchFromProcess(const char* override_env) {
  LibrarySearch in;
  if (const char* v = std::getenv(override_env)) in.env_override = v;
  if (const char* v = std::getenv("CUDA_HOME")) in.cuda_home = v;
  in.loaded = LoadedLibraryPaths();
  return in;
}

bool IsLoaded(const std::vector<std::string>& loaded, const std::string& prefix) {
  return std::any_of(loaded.begin(), loaded.end(),
                     [&](const std::string& p) { return StartsWith(Basename(p), prefix.c_str()); });
}

std::vector<std::string> CuptiCandidates(const LibrarySearch& in) {
  std::vector<std::string> out;
  for (const std::string& p : in.loaded) {
    if (StartsWith(Basename(p), "libcupti.so")) AddIfExists(out, p);
  }
  AddIfExists(out, in.env_override);
  for (const std::string& home : {in.cuda_home, in.default_cuda_home}) {
    if (home.empty()) continue;
    AddFromDir(out, home + "/lib64", "libcupti.so");
    AddFromDir(out, home + "/extras/CUPTI/lib64", "libcupti.so");
  }
  // PyTorch wheels: torch/lib/libtorch_cuda.so sits in site-packages/torch/lib;
  // the CUDA wheels put libcudart in site-packages/nvidia/<pkg>/lib.
  for (const std::string& p : in.loaded) {
    std::string base = Basename(p);
    std::string dir = Dirname(p);
    if (StartsWith(base, "libtorch") || StartsWith(base, "libc10_cuda")) {
      std::string site = Dirname(Dirname(dir));
      AddFromDir(out, site + "/nvidia/cuda_cupti/lib", "libcupti.so");
      AddFromDir(out, site + "/nvidia/cu13/lib", "libcupti.so");
    } else if (StartsWith(base, "libcudart.so")) {
      AddFromDir(out, dir, "libcupti.so");
      std::string nvidia = Dirname(Dirname(dir));
      AddFromDir(out, nvidia + "/cuda_cupti/lib", "libcupti.so");
    }
  }
  out.emplace_back("libcupti.so.13");
  out.emplace_back("libcupti.so");
  return out;
}

std::vector<std::string> DriverCandidates(const LibrarySearch& in) {
  std::vector<std::string> out;
  for (const std::string& p : in.loaded) {
    if (StartsWith(Basename(p), "libcuda.so")) AddIfExists(out, p);
  }
  // Never the toolkit's stubs/libcuda.so: it loads, then fails every call.
  out.emplace_back("libcuda.so.1");
  return out;
}

LoadedLibrary OpenFirst(const std::vector<std::string>& candidates) {
  LoadedLibrary lib;
  for (const std::string& c : candidates) {
    dlerror();
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      lib.handle = h;
      lib.path = c;
      return lib;
    }
    const char* why = dlerror();
    if (!lib.tried.empty()) lib.tried += "; ";
    lib.tried += c + ": " + (why ? why : "not loadable");
  }
  return lib;
}

std::string CudaRuntimeVersionText(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string NcclVersionText(int v) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since.
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? v % 10000 / 100 : v % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

namespace {

// The loaded copy of a library whose file name starts with `prefix` that
// exports `symbol` (cuDNN 9 loads several libcudnn_*.so; the version query
// is in libcudnn.so itself), or nullptr. RTLD_NOLOAD: never loads one.
void* LoadedWith(const std::vector<std::string>& loaded, const char* prefix, const char* symbol, void** handle) {
  for (const std::string& p : loaded) {
    if (!StartsWith(Basename(p), prefix)) continue;
    void* h = dlopen(p.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    if (void* fn = dlsym(h, symbol)) {
      *handle = h;
      return fn;
    }
    dlclose(h);
  }
  return nullptr;
}

// cublasGetProperty and cudnnGetProperty share this shape:
// (libraryPropertyType MAJOR_VERSION=0, MINOR_VERSION=1, PATCH_LEVEL=2, int*).
std::string PropertyVersion(void* fn) {
  using GetProperty = int (*)(int, int*);
  auto get = reinterpret_cast<GetProperty>(fn);
  int part[3] = {};
  for (int i = 0; i < 3; ++i) {
    if (get(i, &part[i]) != 0) return {};
  }
  return std::to_string(part[0]) + "." + std::to_string(part[1]) + "." + std::to_string(part[2]);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> LoadedLibraryVersions(const std::vector<std::string>& loaded) {
  std::vector<std::pair<std::string, std::string>> out;
  void* handle = nullptr;
  if (void* fn = LoadedWith(loaded, "libcudart.so", "cudaRuntimeGetVersion", &handle)) {
    int v = 0;
    if (reinterpret_cast<int (*)(int*)>(fn)(&v) == 0 && v > 0) out.emplace_back("cuda.runtime", CudaRuntimeVersionText(v));
    dlclose(handle);
  }
  if (void* fn = LoadedWith(loaded, "libcublas.so", "cublasGetProperty", &handle)) {
    if (std::string v = PropertyVersion(fn); !v.empty()) out.emplace_back("cublas.version", v);
    dlclose(handle);
  }
  if (void* fn = LoadedWith(loaded, "libcudnn", "cudnnGetProperty", &handle)) {
    if (std::string v = PropertyVersion(fn); !v.empty()) out.emplace_back("cudnn.version", v);
    dlclose(handle);
  }
  if (void* fn = LoadedWith(loaded, "libnccl.so", "ncclGetVersion", &handle)) {
    int v = 0;
    if (reinterpret_cast<int (*)(int*)>(fn)(&v) == 0 && v > 0) out.emplace_back("nccl.version", NcclVersionText(v));
    dlclose(handle);
  }
  return out;
}

}  // namespace numtrace::shim
