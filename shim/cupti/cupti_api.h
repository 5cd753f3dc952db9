// File: shim/cupti/cupti_api.h
//
// The CUPTI functions numtrace calls, resolved from a dlopen handle into a
// table of plain function pointers: numtrace never links libcupti, so the
// job's own copy (PyTorch's wheel) is the one that runs. Nothing outside
// shim/cupti/ sees this header.
//
// Example:
//   CuptiApi& api = CuptiApi::Instance();
//   if (!api.Load(&error)) return;
//   std::string holder;
//   CUptiResult r = SubscribeAs(api, &sub, cb, board, "numtrace", &holder);
//   api.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
#ifndef NUMTRACE_SHIM_CUPTI_CUPTI_API_H_
#define NUMTRACE_SHIM_CUPTI_CUPTI_API_H_

#include <cupti.h>

#include <string>

namespace numtrace::shim {

// Required. cuptiSubscribe_v2 (CUPTI 13.0+, names the subscriber and the
// holder) is resolved separately and optional: a job whose PyTorch wheel
// brings CUPTI 12 (libcupti.so.12, already loaded, so it is the copy we
// must use) still works through the plain cuptiSubscribe. Everything else
// used here has the same ABI in CUPTI 12 and 13.
#define NUMTRACE_CUPTI_FUNCTIONS(X) \
  X(cuptiSubscribe)                 \
  X(cuptiUnsubscribe)               \
  X(cuptiEnableCallback)            \
  X(cuptiEnableDomain)              \
  X(cuptiGetCallbackState)          \
  X(cuptiGetResultString)           \
  X(cuptiGetVersion)

// Optional: the kernel activity check (kernel_activity.h) needs them; a
// CUPTI copy without them (or one that refuses activity, e.g. under a
// sandbox) leaves the check off with one line, never the capture.
#define NUMTRACE_CUPTI_ACTIVITY_FUNCTIONS(X) \
  X(cuptiActivityEnable)                    \
  X(cuptiActivityDisable)                   \
  X(cuptiActivityRegisterCallbacks)         \
  X(cuptiActivityFlushAll)                  \
  X(cuptiActivityGetNextRecord)             \
  X(cuptiActivityGetNumDroppedRecords)

struct CuptiApi {
#define NUMTRACE_DECLARE(fn) decltype(&::fn) fn = nullptr;
  NUMTRACE_CUPTI_FUNCTIONS(NUMTRACE_DECLARE)
#undef NUMTRACE_DECLARE
  decltype(&::cuptiSubscribe_v2) cuptiSubscribe_v2 = nullptr;  // null before CUPTI 13.0
#define NUMTRACE_DECLARE(fn) decltype(&::fn) fn = nullptr;
  NUMTRACE_CUPTI_ACTIVITY_FUNCTIONS(NUMTRACE_DECLARE)
#undef NUMTRACE_DECLARE
  // Every activity function resolved.
  bool has_activity() const {
    return cuptiActivityEnable && cuptiActivityDisable && cuptiActivityRegisterCallbacks &&
           cuptiActivityFlushAll && cuptiActivityGetNextRecord && cuptiActivityGetNumDroppedRecords;
  }

  // The process-wide table the callbacks use.
  static CuptiApi& Instance();

  // Finds libcupti (library_finder.h order) and resolves every function.
  // Returns false, with `error` set, when the library or a symbol is missing.
  bool Load(std::string* error);
  // Resolves from an already opened handle (tests pass a fake library).
  bool LoadFrom(void* handle, std::string* error);
  bool loaded() const { return cuptiSubscribe != nullptr; }

  std::string path;  // where libcupti was found
};

// Subscribes as `name` with cuptiSubscribe_v2 when the library has it (on
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED `*holder` gets the name
// CUPTI reports), else with cuptiSubscribe (`*holder` stays empty).
CUptiResult SubscribeAs(const CuptiApi& api, CUpti_SubscriberHandle* subscriber,
                        CUpti_CallbackFunc callback, void* userdata, const char* name,
                        std::string* holder);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_CUPTI_API_H_
