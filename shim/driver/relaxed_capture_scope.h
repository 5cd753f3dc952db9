// File: shim/driver/relaxed_capture_scope.h
//
// Puts the calling thread in CU_STREAM_CAPTURE_MODE_RELAXED for the scope's
// lifetime and restores the previous mode after. Why: while ANY thread of
// the process captures a stream in global mode (PyTorch's CUDA graphs,
// torch.compile mode="reduce-overhead"), a "potentially unsafe" call from
// any other global-mode thread - cuEventQuery, cuMemAlloc, a copy that may
// sync with the legacy stream - fails and INVALIDATES that capture. The
// mode is per thread, so switching only our own calls to relaxed keeps the
// application's capture intact and leaves its own checks untouched.
// cuStreamIsCapturing needs no scope: it is a query made for this case.
//
// Example:
//   { RelaxedCaptureScope relaxed(api); api.cuEventQuery(event); }
#ifndef NUMTRACE_SHIM_DRIVER_RELAXED_CAPTURE_SCOPE_H_
#define NUMTRACE_SHIM_DRIVER_RELAXED_CAPTURE_SCOPE_H_

#include <cuda.h>

#include "shim/driver/driver_api.h"

namespace numtrace::shim {

class RelaxedCaptureScope {
 public:
  explicit RelaxedCaptureScope(const DriverApi& api) : api_(api) {
    if (api_.cuThreadExchangeStreamCaptureMode == nullptr) return;
    mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
    switched_ = api_.cuThreadExchangeStreamCaptureMode(&mode_) == CUDA_SUCCESS;
  }
  ~RelaxedCaptureScope() {
    if (switched_) api_.cuThreadExchangeStreamCaptureMode(&mode_);  // mode_ holds the old mode
  }
  RelaxedCaptureScope(const RelaxedCaptureScope&) = delete;
  RelaxedCaptureScope& operator=(const RelaxedCaptureScope&) = delete;

 private:
  const DriverApi& api_;
  CUstreamCaptureMode mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool switched_ = false;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DRIVER_RELAXED_CAPTURE_SCOPE_H_
