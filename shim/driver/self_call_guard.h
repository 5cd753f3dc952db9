// File: shim/driver/self_call_guard.h
//
// A thread-local flag that marks "numtrace itself is calling the driver on
// this thread". Our own calls (cuStreamIsCapturing in the launch callback,
// the reduction launches and copies of CudaDevice) raise CUPTI callbacks
// too; the switchboard drops every callback that arrives while the flag is
// set, so the engine never sees its own work and nothing recurses. Toggling
// cuptiEnableCallback instead would be process-wide and lose other threads'
// launches. Free of CUDA headers: cuda_device.cc and the engine may use it.
//
// Example:
//   { SelfCallGuard guard;  api.cuLaunchKernel(...); }  // invisible to numtrace
#ifndef NUMTRACE_SHIM_DRIVER_SELF_CALL_GUARD_H_
#define NUMTRACE_SHIM_DRIVER_SELF_CALL_GUARD_H_

namespace numtrace::shim {

class SelfCallGuard {
 public:
  SelfCallGuard() { ++depth_; }
  ~SelfCallGuard() { --depth_; }
  SelfCallGuard(const SelfCallGuard&) = delete;
  SelfCallGuard& operator=(const SelfCallGuard&) = delete;

  // True while a guard is alive on the calling thread.
  static bool Active() { return depth_ > 0; }

 private:
  static inline thread_local int depth_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DRIVER_SELF_CALL_GUARD_H_
