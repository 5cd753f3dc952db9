// File: shim/cupti/check.h
//
// The checked-call path for CUPTI, the twin of the driver's
// (shim/driver/check.h, whose rate limit it shares): a failed call is
// logged with its source text and CUPTI's own error string, and the macro
// yields whether the call succeeded.
//
// Example:
//   NUMTRACE_CUPTI_CHECK(api.cuptiActivityFlushAll(0));
//   // stderr: numtrace: api.cuptiActivityFlushAll(0) failed: CUPTI_ERROR_... (1) [kernel_activity.cc:97]
#ifndef NUMTRACE_SHIM_CUPTI_CHECK_H_
#define NUMTRACE_SHIM_CUPTI_CHECK_H_

namespace numtrace::shim {

// Returns `code == 0` and logs the failure (rate-limited with the driver's).
bool CheckCuptiResult(int code, const char* call, const char* file, int line);

}  // namespace numtrace::shim

#define NUMTRACE_CUPTI_CHECK(expr) \
  ::numtrace::shim::CheckCuptiResult(static_cast<int>(expr), #expr, __FILE_NAME__, __LINE__)

#endif  // NUMTRACE_SHIM_CUPTI_CHECK_H_
