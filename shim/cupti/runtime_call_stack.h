// File: shim/cupti/runtime_call_stack.h
//
// The runtime API calls in progress on this thread, as witnesses of the
// driver callbacks nested in them. A runtime launch or allocation ENTER is
// pushed; a driver callback on the same thread marks the innermost frame
// (the driver call did the work and was handled as usual); the runtime EXIT
// pops it and learns whether any driver callback fired inside. A runtime
// call without one is counted (runtime_without_driver) and decoded from its
// own parameters as a fallback. Thread-local, fixed depth, no allocation.
//
// Example:
//   RuntimeCallStack::Push(cbid, CallKind::kLaunch, corr);         // runtime ENTER
//   RuntimeCallStack::NoteDriver(CallKind::kLaunch, driver_corr);  // nested driver launch
//   RuntimeFrame f = RuntimeCallStack::Pop(cbid, corr);  // runtime EXIT
//   if (!f.driver_seen) fallback(...);
#ifndef NUMTRACE_SHIM_CUPTI_RUNTIME_CALL_STACK_H_
#define NUMTRACE_SHIM_CUPTI_RUNTIME_CALL_STACK_H_

#include <cstdint>

namespace numtrace::shim {

// What a runtime call does; only a driver callback of the same kind counts
// as having served it (a lazy module load inside a launch may allocate).
enum class CallKind : uint8_t { kOther, kLaunch, kAlloc };

struct RuntimeFrame {
  uint32_t cbid = 0;
  CallKind kind = CallKind::kOther;
  uint32_t correlation = 0;
  bool driver_seen = false;          // a driver callback fired inside this call
  bool correlation_differs = false;  // ...with another correlation id than the runtime call's
  bool found = false;                // Pop found the frame (its ENTER was seen)
};

class RuntimeCallStack {
 public:
  static constexpr int kMaxDepth = 8;

  static void Push(uint32_t cbid, CallKind kind, uint32_t correlation) {
    if (depth_ < kMaxDepth) frames_[depth_] = {cbid, kind, correlation, false, false, true};
    ++depth_;  // counted past kMaxDepth so pops stay balanced
  }
  // Marks the innermost runtime call (if any) as served by a driver
  // callback of the same kind.
  static void NoteDriver(CallKind kind, uint32_t correlation) {
    if (kind == CallKind::kOther || depth_ <= 0 || depth_ > kMaxDepth) return;
    RuntimeFrame& f = frames_[depth_ - 1];
    if (f.kind != kind) return;
    f.driver_seen = true;
    if (correlation != f.correlation) f.correlation_differs = true;
  }
  // Pops the frame of the runtime call `cbid`/`correlation` (and any frame
  // above it whose EXIT never came). `found` is false when its ENTER was
  // not seen: the caller must then not take the call as driverless.
  static RuntimeFrame Pop(uint32_t cbid, uint32_t correlation) {
    for (int i = (depth_ < kMaxDepth ? depth_ : kMaxDepth) - 1; i >= 0; --i) {
      if (frames_[i].cbid == cbid && frames_[i].correlation == correlation) {
        RuntimeFrame f = frames_[i];
        depth_ = i;
        return f;
      }
    }
    if (depth_ > kMaxDepth) --depth_;  // a frame too deep to keep
    return {};
  }
  static int depth() { return depth_; }

 private:
  static inline thread_local RuntimeFrame frames_[kMaxDepth];
  static inline thread_local int depth_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_RUNTIME_CALL_STACK_H_
