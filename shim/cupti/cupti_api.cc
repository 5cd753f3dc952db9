// File: shim/cupti/cupti_api.cc
//
// Resolution of the CUPTI function table; see cupti_api.h.
#include "shim/cupti/cupti_api.h"

#include <dlfcn.h>

#include "shim/cupti/library_finder.h"

namespace numtrace::shim {

CuptiApi& CuptiApi::Instance() {
  static CuptiApi* api = new CuptiApi();  // never destroyed: callbacks may run at exit
  return *api;
}

bool CuptiApi::LoadFrom(void* handle, std::string* error) {
  CuptiApi table;
#define NUMTRACE_RESOLVE(fn)                                                  \
  table.fn = reinterpret_cast<decltype(table.fn)>(dlsym(handle, #fn));       \
  if (table.fn == nullptr) {                                                  \
    if (error) *error = "libcupti has no " #fn " (CUPTI older than 13.0?)";  \
    return false;                                                             \
  }
  NUMTRACE_CUPTI_FUNCTIONS(NUMTRACE_RESOLVE)
#undef NUMTRACE_RESOLVE
  table.path = path;
  *this = table;
  return true;
}

bool CuptiApi::Load(std::string* error) {
  if (loaded()) return true;
  LoadedLibrary lib = OpenFirst(CuptiCandidates(LibrarySearchFromProcess("NUMTRACE_CUPTI_LIB")));
  if (lib.handle == nullptr) {
    if (error) *error = "libcupti not found (set NUMTRACE_CUPTI_LIB); tried " + lib.tried;
    return false;
  }
  path = lib.path;
  return LoadFrom(lib.handle, error);
}

}  // namespace numtrace::shim
