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
// check.
//
// Sharing. CUPTI's activity buffer callbacks are process-wide and need no
// subscriber: whoever registered last gets every buffer, also the ones
// handed out before. torch.profiler's kineto registers its own when a
// profile starts and disables CONCURRENT_KERNEL when it stops
// (libkineto/src/CuptiActivityApi.cpp). So numtrace keeps the set of
// buffers it lent CUPTI, and says - once each, on stderr and as a trace
// note (EventSink::OnWarning):
// - a buffer it did not lend came back: another tool had registered before
//   numtrace (its buffer is read, never freed: it is that tool's), and gets
//   no records from now on;
// - records stopped reaching numtrace: for kSilentStepEnds captured step
//   ends in a row launches were noted and no buffer was requested or
//   returned, although buffers came before; or, at exit, a forced flush
//   returned none of numtrace's lent buffers although launches were noted
//   since the last one came back. Then activity_unavailable = 1: the check
//   is blind (no unmeasured notes), capture itself is not affected.
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
#include <unordered_set>

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

  // Says (once) that a buffer numtrace did not lend came back; call from
  // the writer's thread at every tick (the buffer callbacks only set a flag).
  void Watch(EventSink* sink);

  bool open() const { return open_.load(std::memory_order_relaxed); }
  bool unavailable() const { return unavailable_.load(std::memory_order_relaxed); }

  // Size of each activity buffer handed to CUPTI.
  static constexpr size_t kBufferBytes = 1 << 20;
  // Captured step ends in a row with launches noted and no buffer traffic
  // before numtrace says its records are taken. A 1 MiB buffer holds
  // thousands of kernel records: a step with launches requests or returns
  // one every few steps even when the host runs ahead.
  static constexpr uint32_t kSilentStepEnds = 16;

 private:
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid);
  void Unavailable(const char* what, int code);
  void Report(EventSink* sink);
  // The buffer callbacks' bookkeeping (buffers_mu_ only, held for a set
  // operation): a buffer lent to CUPTI, and one coming back (true: ours).
  void Lend(uint8_t* buffer);
  bool TakeBack(uint8_t* buffer);
  // Records go to another tool: said once, activity_unavailable = 1.
  void Taken(EventSink* sink);

  const CuptiApi& api_;
  KernelActivityCheck* check_;
  // Open/Close only, never held across a flush; no callback takes it.
  std::mutex mu_;
  std::atomic<bool> registered_{false};
  std::atomic<bool> open_{false}, unavailable_{false}, finished_{false};
  std::mutex buffers_mu_;
  std::unordered_set<uint8_t*> lent_;          // under buffers_mu_
  std::atomic<uint64_t> traffic_{0};           // buffers lent + taken back
  std::atomic<uint64_t> notes_at_return_{0};   // check's notes_total when one came back
  std::atomic<bool> foreign_{false}, said_foreign_{false}, said_taken_{false};
  // The writer's thread only (StepEnded).
  uint64_t traffic_at_ = 0, notes_at_ = 0;
  uint32_t silent_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_H_
