// File: shim/cupti/kernel_activity.h
//
// CUPTI kernel activity records for the kernel activity check
// (kernel_activity_check.h), for two kinds:
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (every kernel that ran, with the
// correlation id of the call that launched it) and
// CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API (launches made outside any public
// API call, which raise no callback).
//
// Never from a callback, never a lock a callback needs. The kinds are
// enabled ONCE, from the trace writer's thread at its first tick after the
// engine started (libkineto enables from its own thread too; its first
// enable was seen to stall for seconds), and stay enabled; which records
// count is decided by the check's captured windows. Flushes run on the
// writer's thread (step ends) and at exit, holding no lock: if CUPTI's
// flush waits for a thread that is inside a callback, that callback takes
// nothing we hold. CUPTI's own worker thread hands the filled buffers back;
// Finish, at process exit, forces the last ones out, settles the check and
// reports every unmeasured kernel to the engine (notes and the footer).
// NUMTRACE_ACTIVITY=0 leaves activity off entirely (first thing to try when
// a job hangs under numtrace).
//
// When CUPTI lacks the functions or refuses a kind: one stderr line, the
// footer counter activity_unavailable = 1, and capture goes on without the
// check. The activity buffers are process-global in CUPTI; numtrace holds
// the process's only subscriber slot anyway (docs/gpu.md).
//
// Example:
//   KernelActivity activity(CuptiApi::Instance(), &check);
//   activity.Open();            // writer thread, once
//   activity.StepEnded(sink);   // writer thread, after each captured step
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
  // (reported once; never retried). Never call it from a CUPTI callback.
  bool Open();
  // Disables the kinds (exit); records already made still arrive.
  void Close();
  // A captured step ended: hands the completed buffers over now (flush
  // without force) and reports what they show unmeasured to `sink`. Call
  // outside any callback (the writer's thread).
  void StepEnded(EventSink* sink);
  // Forced flush, then every unmeasured kernel goes to `sink` (may be null:
  // only counted). Call once, outside any callback (process exit); Open
  // refuses from then on.
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
  // Open/Close only, never held across a flush; no callback takes it.
  std::mutex mu_;
  std::atomic<bool> registered_{false};
  std::atomic<bool> open_{false}, unavailable_{false}, finished_{false};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_H_
