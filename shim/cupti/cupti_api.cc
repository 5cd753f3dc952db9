// File: shim/cupti/cupti_api.cc
//
// Resolution of the CUPTI function table; see cupti_api.h.
#include "shim/cupti/cupti_api.h"

#include <dlfcn.h>

#include "shim/driver/library_finder.h"

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
    if (error) *error = "libcupti has no " #fn " (not a CUPTI library?)";  \
    return false;                                                             \
  }
  NUMTRACE_CUPTI_FUNCTIONS(NUMTRACE_RESOLVE)
#undef NUMTRACE_RESOLVE
  table.cuptiSubscribe_v2 =
      reinterpret_cast<decltype(table.cuptiSubscribe_v2)>(dlsym(handle, "cuptiSubscribe_v2"));
#define NUMTRACE_RESOLVE_OPTIONAL(fn) \
  table.fn = reinterpret_cast<decltype(table.fn)>(dlsym(handle, #fn));
  NUMTRACE_CUPTI_ACTIVITY_FUNCTIONS(NUMTRACE_RESOLVE_OPTIONAL)
#undef NUMTRACE_RESOLVE_OPTIONAL
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

CUptiResult SubscribeAs(const CuptiApi& api, CUpti_SubscriberHandle* subscriber,
                        CUpti_CallbackFunc callback, void* userdata, const char* name,
                        std::string* holder) {
  if (api.cuptiSubscribe_v2 == nullptr) return api.cuptiSubscribe(subscriber, callback, userdata);
  char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = name;
  params.oldSubscriberName = old;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;  // old[] keeps one more NUL
  CUptiResult r = api.cuptiSubscribe_v2(subscriber, callback, userdata, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && holder != nullptr) *holder = old;
  return r;
}

}  // namespace numtrace::shim
