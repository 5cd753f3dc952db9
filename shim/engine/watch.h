// File: shim/engine/watch.h
//
// Watch mode (NUMTRACE_WATCH=full|sampled, docs/configuration.md): a digest
// of every launch on every step, so `numtrace diff` can say which step the
// runs first differ in (docs/format.md, `digest`). At each launch's EXIT the
// buffers it touched are found as for a capture (buffer_scan.h,
// measurement_plan.h) and measured by the Device on the launch's stream,
// after the kernel - whole (`full`) or over the documented sample
// (`sampled`, common/format/digest.h) - with a ticket of its own (bit 63
// set). The engine's Pump hands results back here; finished launches are
// folded in launch order into one `digest` record per step, kernel names
// into `kernel_name` records (ids), and pushed to the RecordSink.
//
// Launch path: one short mutex to take the launch's slot, thread-local
// scratch reused (no allocation once warm), no host synchronisation. A
// launch that cannot be measured (device refused, stream capturing into a
// graph, parameters not decoded) counts as `lost` in its step's record.
//
// Operator level (NUMTRACE_LEVEL=ops): OnOp takes one operator call
// instead, its CPU tensors already hashed by the engine's host reduction and
// its CUDA ones queued here on the op device under the same watch tickets.
//
// Example:
//   StepWatch watch(WatchMode::kFull, config, &device, &sink);
//   watch.OnLaunch(launch, kernel_info, step, allocs, oracle);  // EXIT
//   watch.OnResult(ticket, stats);   // from Device::Poll (IsWatchTicket)
//   watch.Collect(/*final=*/false);  // writer thread: emits finished steps
#ifndef NUMTRACE_SHIM_ENGINE_WATCH_H_
#define NUMTRACE_SHIM_ENGINE_WATCH_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/format/records.h"
#include "common/format/stats.h"
#include "common/settings/modes.h"
#include "shim/engine/device.h"
#include "shim/engine/alloc_map.h"
#include "shim/engine/events.h"
#include "shim/engine/kernel_cache.h"
#include "shim/engine/range_oracle.h"
#include "shim/engine/tensor_map.h"
#include "shim/writer/record_sink.h"

namespace numtrace::shim {


class StepWatch {
 public:
  StepWatch(settings::WatchMode mode, uint64_t min_bytes, Device* device, RecordSink* sink);

  static constexpr uint64_t kTicketBit = uint64_t{1} << 63;
  static bool IsWatchTicket(uint64_t ticket) { return (ticket & kTicketBit) != 0; }

  // A launch that went through (EXIT), in step `step` (< 0: outside every
  // step, not digested). Any thread.
  void OnLaunch(const LaunchEvent& launch, const KernelInfo& kernel, int64_t step,
                const AllocMap& allocs, RangeOracle* ranges, const TensorMap* tensors = nullptr);
  // Operator level: one operator call of step `step` (>= 0), in call order.
  // `hashes`: one per measured piece in the op record's buffer order (each
  // tensor whole, or its sample windows); the pieces at `device_at` are
  // measured by `items` (same order) on `device`/`stream` and filled in
  // when their results come. `lost`: the call could not be digested.
  void OnOp(int64_t step, std::string_view name, std::vector<uint64_t> hashes, bool nonfinite, bool lost,
            std::vector<uint32_t> device_at, Device* device, uint64_t stream, std::span<const MeasureItem> items);
  // The sample windows of `items` in `sampled` mode (common/format/digest.h),
  // appended to `out`; in `full` mode the items themselves.
  void Sample(std::span<const MeasureItem> items, std::vector<MeasureItem>* out) const;
  settings::WatchMode mode() const { return mode_; }

  // A measurement with a watch ticket (the Pump's thread); `failed`: the
  // device reported an error for it (the launch counts as lost).
  void OnResult(uint64_t ticket, std::span<const BufferStats> stats, bool failed);
  // Step `step` ended (a marker): its record may go out once its launches are
  // in, numbered `as` (the job's own number for it, StepTracker::Mark; a
  // launch's step is only known as the process counted it when it ran).
  void StepEnded(int64_t step, int64_t as);
  void StepEnded(int64_t step) { StepEnded(step, step); }
  // Pump's thread: folds finished launches in order and pushes each complete
  // step. `final` (exit, after the device drained): everything left counts,
  // unfinished launches as lost.
  void Collect(bool final);

  uint64_t digested() const { return digested_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    int64_t step = 0;
    int64_t raw_step = 0;  // Collect: the number it was launched under (step: as recorded)
    const std::string* name = nullptr;  // the kernel's symbol, or an interned op name
    // Operator level: the pieces' hashes, those at device_at still to come.
    std::vector<uint64_t> op_hashes;
    std::vector<uint32_t> device_at;
    uint64_t digest = 0;
    bool done = false, lost = false, nonfinite = false;
  };
  void Finish(Slot* s, std::span<const BufferStats> stats);
  // The ring of launches in flight, by ticket index (mu_ held). A power of
  // two that only grows: no allocation per launch once it holds a step's
  // worth of launches in flight.
  Slot& At(uint64_t index) { return ring_[index & (ring_.size() - 1)]; }
  bool Live(uint64_t index) const { return index >= base_ && index < base_ + size_; }
  void GrowLocked();
  uint64_t TakeSlotLocked(int64_t step, const std::string* name);
  void EmitCurrent();
  uint64_t NameId(const std::string* name);

  const settings::WatchMode mode_;
  const uint64_t min_bytes_;
  Device* device_;
  RecordSink* sink_;

  std::mutex mu_;  // ring_, base_, size_
  std::vector<Slot> ring_ = std::vector<Slot>(4096);
  uint64_t base_ = 0;  // ticket index of the oldest launch in flight
  uint64_t size_ = 0;  // launches in flight
  std::atomic<int64_t> ended_step_{-1};  // as numbered in the records
  // Steps that end under another number than their launches carry (raw ->
  // as), until their launches are folded. Rare (a resumed job's first step).
  std::map<int64_t, int64_t> renumbered_;  // guarded by mu_
  std::unordered_set<std::string> op_names_;  // mu_: stable addresses for Slot::name
  std::atomic<uint64_t> digested_{0};

  // Collect's thread only.
  std::optional<DigestRecord> current_;
  int64_t current_raw_step_ = 0;  // the number current_'s launches were counted under
  std::vector<Slot> ready_;  // reused by every Collect
  std::unordered_map<const std::string*, uint64_t> name_ids_;
  uint64_t next_name_id_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_WATCH_H_
