// File: shim/cupti/kernel_activity.h
//
// CUPTI kernel activity records for the kernel activity check
// (kernel_activity_check.h). Enabled only while steps are captured - the
// switchboard opens the window at the first launch the engine may capture
// and closes it at the first quiet one - for two kinds:
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (every kernel that ran, with the
// correlation id of the call that launched it) and
// CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API (launches made outside any public
// API call, which raise no callback). CUPTI's own worker thread hands the
// filled buffers back (never flushed from inside a callback); Finish, at
// process exit, forces the last ones out, settles the check and reports
// every unmeasured kernel to the engine (notes and the footer).
//
// When CUPTI lacks the functions or refuses a kind: one stderr line, the
// footer counter activity_unavailable = 1, and capture goes on without the
// check. The activity buffers are process-global in CUPTI; numtrace holds
// the process's only subscriber slot anyway (docs/gpu.md).
//
// Example:
//   KernelActivity activity(CuptiApi::Instance(), &check);
//   activity.Open();            // switchboard: captured window begins
//   activity.Close();           // first quiet launch
//   activity.Finish(sink);      // exit: flush, settle, sink->OnUnmeasured(...)
#ifndef NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_H_
#define NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_H_

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "shim/cupti/kernel_activity_check.h"
#include "shim/engine/event_sink.h"

namespace numtrace::shim {

struct CuptiApi;

class KernelActivity {
 public:
  KernelActivity(const CuptiApi& api, KernelActivityCheck* check);
  KernelActivity(const KernelActivity&) = delete;
  KernelActivity& operator=(const KernelActivity&) = delete;
  // Drops the buffer callbacks' route to this object.
  ~KernelActivity();

  // Enables the two kinds (registering the buffer callbacks the first
  // time). Idempotent while open. False when activity is unavailable
  // (reported once; never retried).
  bool Open();
  // Disables the kinds; records already made still arrive.
  void Close();
  // A captured step ended: hands the completed buffers over now (flush
  // without force) and reports what they show unmeasured to `sink`. Call
  // outside any callback (the writer's thread).
  void StepEnded(EventSink* sink);
  // Forced flush, then every unmeasured kernel goes to `sink` (may be null:
  // only counted). Call once, outside any callback (process exit).
  void Finish(EventSink* sink);

  // Reads one completed buffer into the check (the buffer callback's work;
  // public for tests that fill a buffer themselves).
  void ReadBuffer(uint8_t* buffer, size_t valid_bytes);

  bool open() const { return open_.load(std::memory_order_relaxed); }
  bool unavailable() const { return unavailable_.load(std::memory_order_relaxed); }

  // Size of each activity buffer handed to CUPTI.
  static constexpr size_t kBufferBytes = 1 << 20;

 private:
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid);
  void Unavailable(const char* what, int code);
  void Report(EventSink* sink);

  const CuptiApi& api_;
  KernelActivityCheck* check_;
  std::mutex mu_;  // Open/Close/Finish
  bool registered_ = false;
  std::atomic<bool> open_{false}, unavailable_{false};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_H_
