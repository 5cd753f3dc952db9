// File: shim/cupti/check.h
//
// The one checked-call path for CUPTI and the driver API (kineto's
// DeviceUtil.h habit): a failed call is logged through the shim's one
// logger (shim/log/log.h) with its source text and the library's own error
// string, and the macro yields whether the call succeeded, so callers fall
// back instead of crashing the job. Calls whose failure is an answer, not
// an error (end of cuFuncGetParamInfo iteration, cuEventQuery's NOT_READY,
// cuStreamIsCapturing's IMPLICIT, cuStreamGetCtx before a fallback) are
// made directly and their result handled where they are made.
//
// Example:
//   if (!NUMTRACE_CU_CHECK(api.cuMemAlloc_v2(&ptr, bytes))) return false;
//   // stderr: numtrace: api.cuMemAlloc_v2(&ptr, bytes) failed: out of memory (2) [cuda_device.cc:88]
#ifndef NUMTRACE_SHIM_CUPTI_CHECK_H_
#define NUMTRACE_SHIM_CUPTI_CHECK_H_

namespace numtrace::shim {

// Both return `code == 0` and log the failure (rate-limited: a broken driver
// inside a hot loop must not flood the job's stderr).
bool CheckCuptiResult(int code, const char* call, const char* file, int line);
bool CheckDriverResult(int code, const char* call, const char* file, int line);

}  // namespace numtrace::shim

#define NUMTRACE_CUPTI_CHECK(expr) \
  ::numtrace::shim::CheckCuptiResult(static_cast<int>(expr), #expr, __FILE_NAME__, __LINE__)
#define NUMTRACE_CU_CHECK(expr) \
  ::numtrace::shim::CheckDriverResult(static_cast<int>(expr), #expr, __FILE_NAME__, __LINE__)

#endif  // NUMTRACE_SHIM_CUPTI_CHECK_H_
