// File: shim/cupti/launch_capture_state.h
//
// The capture status of the launch being handled on this thread, asked of
// the driver ONCE per launch: the switchboard queries cuStreamIsCapturing at
// ENTER, keeps the answer keyed by CUPTI's correlation id and reuses it at
// EXIT. The answer travels on ONE path: LaunchEvent::stream_capturing. The
// engine measures nothing for a capturing launch, so CudaDevice never asks
// nor reads a thread-local of its own. Thread-local, no lock, free of CUDA
// headers.
//
// Example (switchboard, at ENTER or EXIT):
//   bool capturing = LaunchCaptureState::Resolve(corr, stream, [&] { return q.IsCapturing(stream); });
//   e.stream_capturing = capturing;  // the engine decides from the event
#ifndef NUMTRACE_SHIM_CUPTI_LAUNCH_CAPTURE_STATE_H_
#define NUMTRACE_SHIM_CUPTI_LAUNCH_CAPTURE_STATE_H_

#include <cstdint>

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

 private:
  static inline thread_local Slot slot_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_LAUNCH_CAPTURE_STATE_H_
