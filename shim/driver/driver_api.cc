// File: shim/driver/driver_api.cc
//
// Resolution of the driver function table; see driver_api.h.
#include "shim/driver/driver_api.h"

#include <dlfcn.h>

#include "shim/driver/library_finder.h"

namespace numtrace::shim {

DriverApi& DriverApi::Instance() {
  static DriverApi* api = new DriverApi();  // never destroyed: used at exit
  return *api;
}

bool DriverApi::LoadFrom(void* handle, std::string* error) {
  DriverApi table;
#define NUMTRACE_RESOLVE(fn)                                                      \
  table.fn = reinterpret_cast<decltype(table.fn)>(dlsym(handle, #fn));           \
  if (table.fn == nullptr) {                                                      \
    if (error) *error = "libcuda has no " #fn " (driver older than CUDA 12.4?)"; \
    return false;                                                                 \
  }
  NUMTRACE_DRIVER_FUNCTIONS(NUMTRACE_RESOLVE)
#undef NUMTRACE_RESOLVE
  *this = table;
  return true;
}

bool DriverApi::Load(std::string* error) {
  if (loaded()) return true;
  LoadedLibrary lib = OpenFirst(DriverCandidates(LibrarySearchFromProcess("NUMTRACE_CUDA_LIB")));
  if (lib.handle == nullptr) {
    if (error) *error = "no NVIDIA driver (libcuda.so.1): " + lib.tried;
    return false;
  }
  return LoadFrom(lib.handle, error);
}

}  // namespace numtrace::shim
