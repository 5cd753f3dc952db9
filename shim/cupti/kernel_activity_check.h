// File: shim/cupti/kernel_activity_check.h
//
// Which kernels ran without numtrace seeing their launch. During captured
// steps the switchboard notes the correlation id of every launch it handled
// (driver or runtime callback, graph launches apart); CUPTI's kernel
// activity records (kernel_activity.h) arrive later with the correlation id
// of the API call that launched each kernel. Settle() matches the two: a
// kernel record whose id was never noted ran unmeasured - a launch path
// numtrace does not hook (CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API launches
// raise no callback at all). Kernels inside a CUDA graph (record graphId
// != 0) are attributed to their graph launch, never measured one by one.
// numtrace's own reduction kernels are excluded by name.
//
// Windows. Activity records are enabled once for the whole job (never from
// a callback, kernel_activity.h), so records also come for kernels of steps
// that are not captured. The switchboard marks where captured windows open
// and close by the correlation id of the launch that flipped them
// (Window()); a record outside every window is ignored - on arrival when it
// is newer than the last closed window, so quiet steps hold no memory. This
// relies on CUPTI's correlation ids growing through the process
// ([D] docs/gpu.md: not yet seen on a GPU). Until the first Window() call
// the check counts every record (one window open from id 0).
//
// Late records. cuptiActivityFlushAll(0) hands over only buffers whose
// records are all complete, so when the host runs ahead of the GPU (normal
// training, no per-step synchronisation) a step's kernel records arrive
// several step ends later. The noted ids are therefore kept for
// kKeptGenerations settles, then dropped; the highest id of each dropped
// generation raises a watermark (CUPTI's correlation ids grow through the
// process), and a record at or below it whose id is no longer held arrived
// too late to be matched: counted as late (TakeLate, footer kernels_late),
// never as unmeasured.
//
// Memory with NUMTRACE_STEPS=all: about 4 bytes and a hash node per
// captured launch of kKeptGenerations steps, not of the whole job. In watch mode every launch is decoded,
// so the window stays open and every launch is noted: the engine then
// reports every step's end (Engine::TakeStepEnded), so Settle still runs
// once a step and memory stays bounded by two steps' launches.
//
// Records are held until Settle (not matched on arrival): CUPTI may deliver
// a short kernel's record before the launch callback's EXIT has returned.
// No CUDA header: tests feed it plain values.
//
// Example:
//   KernelActivityCheck check(kReduceBatchKernelName);
//   check.NoteLaunch(41);                       // switchboard, captured launch
//   check.OnKernel(41, "gemm", false);          // activity record: matched
//   check.OnKernel(42, "nccl_allreduce", false); // never seen
//   check.Settle();  // {{"nccl_allreduce", 1, false}}
#ifndef NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_CHECK_H_
#define NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_CHECK_H_

#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace numtrace::shim {

class KernelActivityCheck {
 public:
  // `own_kernel` names numtrace's reduction kernel (excluded from the check).
  explicit KernelActivityCheck(std::string_view own_kernel) : own_kernel_(own_kernel) {}

  // A launch numtrace handled, by the correlation id of its callback.
  void NoteLaunch(uint32_t correlation);
  // A captured window opens (`open`) or closes at the launch whose callback
  // carries `correlation`. Repeated calls in the same state are ignored.
  void Window(bool open, uint32_t correlation);
  // One kernel activity record.
  void OnKernel(uint32_t correlation, std::string_view name, bool in_graph);

  struct Unmeasured {
    std::string name;
    uint64_t count = 0;
    bool in_graph = false;
  };
  // Settles a noted launch is kept for: the step just ended and the ones
  // before it whose records may still come.
  static constexpr size_t kKeptGenerations = 8;

  // Matches the records received so far; returns unmeasured kernels by
  // (name, in_graph), sorted by name. Clears the records and ages the noted
  // launches (kept for kKeptGenerations settles). Thread-safe.
  std::vector<Unmeasured> Settle();
  // Records that came after their launch's id had aged out, since the last
  // call: neither matched nor unmeasured.
  uint64_t TakeLate();

  // Noted launches still held (all generations).
  uint64_t launches_noted() const;
  // NoteLaunch calls since construction (KernelActivity watches whether
  // records keep coming for them).
  uint64_t notes_total() const;
  // Records ignored as outside every captured window.
  uint64_t records_outside() const;

 private:
  static constexpr uint32_t kOpenEnd = std::numeric_limits<uint32_t>::max();
  struct Record {
    uint32_t correlation;
    bool in_graph;
    std::string name;
  };
  struct Span {
    uint32_t begin, end;  // [begin, end); end kOpenEnd while open
  };
  struct Generation {
    std::unordered_set<uint32_t> ids;
    uint32_t highest = 0;
  };
  bool InWindowLocked(uint32_t correlation) const;
  bool NotedLocked(uint32_t correlation) const;

  const std::string own_kernel_;
  mutable std::mutex mu_;
  Generation seen_;                // since the last settle
  std::deque<Generation> kept_;    // the settles before, oldest first
  bool aged_ = false;              // a generation was dropped: aged_through_ holds
  uint32_t aged_through_ = 0;      // highest id of the dropped generations
  uint64_t late_ = 0;
  uint64_t notes_ = 0;
  std::vector<Record> records_;
  std::deque<Span> windows_{{0, kOpenEnd}};
  uint64_t outside_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_KERNEL_ACTIVITY_CHECK_H_
