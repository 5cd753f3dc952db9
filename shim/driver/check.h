// File: shim/driver/check.h
//
// The one checked-call path for the driver API (kineto's DeviceUtil.h
// habit): a failed call is logged through the shim's one logger
// (shim/log/log.h) with its source text and the driver's own error string,
// and the macro yields whether the call succeeded, so callers fall back
// instead of crashing the job. Calls whose failure is an answer, not an
// error (end of cuFuncGetParamInfo iteration, cuEventQuery's NOT_READY,
// cuStreamIsCapturing's IMPLICIT, cuStreamGetCtx before a fallback) are
// made directly and their result handled where they are made. CUPTI's
// twin is shim/cupti/check.h; both share one rate limit.
//
// Example:
//   if (!NUMTRACE_CU_CHECK(api.cuMemAlloc_v2(&ptr, bytes))) return false;
//   // stderr: numtrace: api.cuMemAlloc_v2(&ptr, bytes) failed: out of memory (2) [cuda_device.cc:88]
#ifndef NUMTRACE_SHIM_DRIVER_CHECK_H_
#define NUMTRACE_SHIM_DRIVER_CHECK_H_

namespace numtrace::shim {

// Returns `code == 0` and logs the failure (rate-limited: a broken driver
// inside a hot loop must not flood the job's stderr).
bool CheckDriverResult(int code, const char* call, const char* file, int line);
// Whether one more failure line may be printed (the first 20 CUDA and
// CUPTI failures together; then one line saying the rest are not).
bool MayLogCallFailure();

}  // namespace numtrace::shim

#define NUMTRACE_CU_CHECK(expr) \
  ::numtrace::shim::CheckDriverResult(static_cast<int>(expr), #expr, __FILE_NAME__, __LINE__)

#endif  // NUMTRACE_SHIM_DRIVER_CHECK_H_
