// File: shim/cupti/cupti_api.h
//
// The CUPTI functions numtrace calls, resolved from a dlopen handle into a
// table of plain function pointers: numtrace never links libcupti, so the
// job's own copy (PyTorch's wheel) is the one that runs. Nothing outside
// shim/cupti/ sees this header.
//
// Example:
//   CuptiApi& api = CuptiApi::Instance();
//   if (!api.Load()) return;  // one stderr line already printed
//   api.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
#ifndef NUMTRACE_SHIM_CUPTI_CUPTI_API_H_
#define NUMTRACE_SHIM_CUPTI_CUPTI_API_H_

#include <cupti.h>

#include <string>

namespace numtrace::shim {

#define NUMTRACE_CUPTI_FUNCTIONS(X) \
  X(cuptiSubscribe_v2)              \
  X(cuptiUnsubscribe)               \
  X(cuptiEnableCallback)            \
  X(cuptiEnableDomain)              \
  X(cuptiGetResultString)           \
  X(cuptiGetVersion)

struct CuptiApi {
#define NUMTRACE_DECLARE(fn) decltype(&::fn) fn = nullptr;
  NUMTRACE_CUPTI_FUNCTIONS(NUMTRACE_DECLARE)
#undef NUMTRACE_DECLARE

  // The process-wide table the callbacks use.
  static CuptiApi& Instance();

  // Finds libcupti (library_finder.h order) and resolves every function.
  // Returns false, with `error` set, when the library or a symbol is missing.
  bool Load(std::string* error);
  // Resolves from an already opened handle (tests pass a fake library).
  bool LoadFrom(void* handle, std::string* error);
  bool loaded() const { return cuptiSubscribe_v2 != nullptr; }

  std::string path;  // where libcupti was found
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_CUPTI_API_H_
