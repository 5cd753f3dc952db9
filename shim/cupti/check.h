// File: shim/cupti/check.h
//
// One checked-call macro for each of CUPTI and the driver API (kineto's
// DeviceUtil.h habit): a failed call is logged with its source text and the
// library's own error string, and the macro yields whether the call
// succeeded, so callers fall back instead of crashing the job. Calls whose
// failure is expected (end of cuFuncGetParamInfo iteration, cuEventQuery's
// NOT_READY) are made directly, without the macro.
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

// Prints one "numtrace: ..." line on stderr at warn level through the
// logging facade (shim/log/log.h). Used for the few messages a user must
// see (CUPTI held by another tool, no driver); printf-style for the CUDA
// layer's existing call sites, new code may call log::Warn directly.
void LogLine(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace numtrace::shim

#define NUMTRACE_CUPTI_CHECK(expr) \
  ::numtrace::shim::CheckCuptiResult(static_cast<int>(expr), #expr, __FILE_NAME__, __LINE__)
#define NUMTRACE_CU_CHECK(expr) \
  ::numtrace::shim::CheckDriverResult(static_cast<int>(expr), #expr, __FILE_NAME__, __LINE__)

#endif  // NUMTRACE_SHIM_CUPTI_CHECK_H_
