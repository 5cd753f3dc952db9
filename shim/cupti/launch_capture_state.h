// File: shim/cupti/launch_capture_state.h
//
// The capture status of the launch being handled on this thread, asked of
// the driver ONCE per launch: the switchboard queries cuStreamIsCapturing at
// ENTER, keeps the answer keyed by CUPTI's correlation id and reuses it at
// EXIT; while the engine runs inside the callback, CudaDevice::Enqueue reads
// it through Known() instead of asking again. Thread-local, no lock, free of
// CUDA headers.
//
// Example (switchboard, at ENTER or EXIT):
//   bool capturing = LaunchCaptureState::Resolve(corr, stream, [&] { return q.IsCapturing(stream); });
//   LaunchCaptureState::Scope in_callback(stream, capturing);
//   sink->OnLaunch(e);   // CudaDevice::Enqueue -> LaunchCaptureState::Known(stream)
#ifndef NUMTRACE_SHIM_CUPTI_LAUNCH_CAPTURE_STATE_H_
#define NUMTRACE_SHIM_CUPTI_LAUNCH_CAPTURE_STATE_H_

#include <cstdint>
#include <optional>

namespace numtrace::shim {

namespace capture_state_internal {
struct Slot {
  uint32_t correlation = 0;
  uint64_t stream = 0;
  bool capturing = false;
  bool valid = false;
};
}  // namespace capture_state_internal

class LaunchCaptureState {
  using Slot = capture_state_internal::Slot;

 public:
  // The cached answer for (correlation, stream) when the previous call on
  // this thread asked for the same launch; otherwise `query()` once.
  template <typename Query>
  static bool Resolve(uint32_t correlation, uint64_t stream, Query&& query) {
    Slot& s = slot_;
    if (s.valid && s.correlation == correlation && s.stream == stream) return s.capturing;
    s = {correlation, stream, query(), true};
    return s.capturing;
  }
  // Forget the cached answer (after EXIT: a correlation id may be reused).
  static void Forget() { slot_.valid = false; }

  // Marks `stream`'s status as known for the scope (the engine call).
  class Scope {
   public:
    Scope(uint64_t stream, bool capturing) : saved_(known_) { known_ = {0, stream, capturing, true}; }
    ~Scope() { known_ = saved_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Slot saved_;
  };
  // The status of `stream` when a Scope on this thread names it.
  static std::optional<bool> Known(uint64_t stream) {
    if (known_.valid && known_.stream == stream) return known_.capturing;
    return std::nullopt;
  }

 private:
  static inline thread_local Slot slot_;
  static inline thread_local Slot known_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_LAUNCH_CAPTURE_STATE_H_
