#include "shim/engine/watch.h"

#include <utility>
#include <vector>

#include "common/format/digest.h"
#include "shim/engine/buffer_scan.h"
#include "shim/engine/measurement_plan.h"

namespace numtrace::shim {

namespace {

// Reused by one thread's launches: no allocation once warm.
struct Items {
  std::vector<ScannedBuffer> scanned;
  MeasurementPlan plan;
  std::vector<MeasureItem> sampled;
};

Items* ThreadItems() {
  thread_local Items items;
  return &items;
}

}  // namespace

StepWatch::StepWatch(settings::WatchMode mode, uint64_t min_bytes, Device* device, RecordSink* sink)
    : mode_(mode), min_bytes_(min_bytes), device_(device), sink_(sink) {}

void StepWatch::OnLaunch(const LaunchEvent& launch, const KernelInfo& kernel, int64_t step,
                         const AllocMap& allocs, RangeOracle* ranges, const TensorMap* tensors) {
  if (step < 0) return;
  uint64_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    index = TakeSlotLocked(step, &kernel.symbol);
  }
  // Measuring into a capturing stream would add our work to the user's graph.
  bool queued = false;
  if (launch.decoded && !launch.stream_capturing) {
    Items& it = *ThreadItems();
    ScanBuffers(launch.params, launch.layout, allocs, &it.scanned, ranges, tensors);
    BuildPlan(it.scanned, kernel, min_bytes_, &it.plan);
    std::span<const MeasureItem> items = it.plan.items;
    if (mode_ == settings::WatchMode::kSampled) {
      it.sampled.clear();
      Sample(it.plan.items, &it.sampled);
      items = it.sampled;
    }
    if (items.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (Live(index)) Finish(&At(index), {});  // else written off at exit
      return;
    }
    queued = device_->Enqueue(launch.stream, items, kTicketBit | index);
  }
  if (!queued) {
    std::lock_guard<std::mutex> lock(mu_);
    if (Live(index)) At(index).done = At(index).lost = true;
  }
}

void StepWatch::Sample(std::span<const MeasureItem> items, std::vector<MeasureItem>* out) const {
  if (mode_ != settings::WatchMode::kSampled) {
    out->insert(out->end(), items.begin(), items.end());
    return;
  }
  SampleWindow w[kSampleWindows];
  for (const MeasureItem& m : items) {
    const uint32_t n = SampleWindows(m.bytes, w);
    for (uint32_t i = 0; i < n; ++i) out->push_back({m.address + w[i].offset, w[i].bytes, m.dtype});
  }
}

uint64_t StepWatch::TakeSlotLocked(int64_t step, const std::string* name) {
  if (size_ == ring_.size()) GrowLocked();
  const uint64_t index = base_ + size_++;
  Slot& s = At(index);
  s = Slot();
  s.step = s.raw_step = step;
  s.name = name;
  return index;
}

void StepWatch::OnOp(int64_t step, std::string_view name, std::vector<uint64_t> hashes, bool nonfinite, bool lost,
                     std::vector<uint32_t> device_at, Device* device, uint64_t stream,
                     std::span<const MeasureItem> items) {
  if (step < 0) return;
  uint64_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    index = TakeSlotLocked(step, &*op_names_.emplace(name).first);
    Slot& s = At(index);
    s.nonfinite = nonfinite;
    if (lost) {
      s.done = s.lost = true;
      return;
    }
    s.op_hashes = std::move(hashes);
    if (items.empty()) {
      s.digest = KernelDigest(s.op_hashes);
      s.done = true;
      return;
    }
    s.device_at = std::move(device_at);
  }
  // Queued outside the lock, as a launch's; its result may come before we retake it.
  if (!device->Enqueue(stream, items, kTicketBit | index)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (Live(index)) At(index).done = At(index).lost = true;
  }
}

void StepWatch::Finish(Slot* s, std::span<const BufferStats> stats) {
  // At most a few dozen items a launch: on the stack, no allocation.
  uint64_t hashes[256];
  const size_t n = stats.size() < 256 ? stats.size() : 256;
  bool nonfinite = false;
  for (size_t i = 0; i < stats.size(); ++i) {
    if (i < n) hashes[i] = stats[i].hash;
    nonfinite = nonfinite || stats[i].nan != 0 || stats[i].inf != 0 || stats[i].ninf != 0;
  }
  uint64_t digest = KernelDigest(std::span<const uint64_t>(hashes, n));
  // Beyond 256 items (rare: a launch touching hundreds of buffers) fold the rest in too.
  for (size_t i = n; i < stats.size(); ++i) digest = Mix64(digest ^ stats[i].hash);
  s->digest = digest;
  s->nonfinite = nonfinite;
  s->done = true;
}

void StepWatch::OnResult(uint64_t ticket, std::span<const BufferStats> stats, bool failed) {
  const uint64_t index = ticket & ~kTicketBit;
  std::lock_guard<std::mutex> lock(mu_);
  if (!Live(index)) return;  // written off at exit
  Slot& s = At(index);
  if (failed) {
    s.done = s.lost = true;
    return;
  }
  if (!s.device_at.empty()) {  // an operator call: its device pieces in their places
    for (size_t i = 0; i < stats.size() && i < s.device_at.size(); ++i) {
      s.op_hashes[s.device_at[i]] = stats[i].hash;
      s.nonfinite = s.nonfinite || stats[i].nan != 0 || stats[i].inf != 0 || stats[i].ninf != 0;
    }
    s.digest = KernelDigest(s.op_hashes);
    s.done = true;
    return;
  }
  Finish(&s, stats);
}

void StepWatch::GrowLocked() {
  std::vector<Slot> bigger(ring_.size() * 2);
  for (uint64_t i = base_; i < base_ + size_; ++i) bigger[i & (bigger.size() - 1)] = std::move(At(i));
  ring_.swap(bigger);
}

void StepWatch::StepEnded(int64_t step, int64_t as) {
  if (as != step) {
    std::lock_guard<std::mutex> lock(mu_);
    renumbered_[step] = as;
  }
  step = as;
  int64_t prev = ended_step_.load(std::memory_order_relaxed);
  while (step > prev && !ended_step_.compare_exchange_weak(prev, step, std::memory_order_acq_rel)) {
  }
}

uint64_t StepWatch::NameId(const std::string* name) {
  auto [it, inserted] = name_ids_.emplace(name, next_name_id_);
  if (inserted) {
    ++next_name_id_;
    sink_->Push(KernelNameRecord{it->second, *name});
  }
  return it->second;
}

void StepWatch::EmitCurrent() {
  if (!current_) return;
  DigestRecord& d = *current_;
  d.kernels = d.kernel_hashes.size();
  d.hash = StepHash(d.kernel_hashes);
  sink_->Push(std::move(d));
  current_.reset();
}

void StepWatch::Collect(bool final) {
  std::vector<Slot>& ready = ready_;
  ready.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The step being folded may have ended under another number since the
    // last Collect: its record and its remaining launches take that number.
    if (current_ && !renumbered_.empty()) {
      if (auto it = renumbered_.find(current_raw_step_); it != renumbered_.end()) current_->step = it->second;
    }
    while (size_ != 0 && (At(base_).done || final)) {
      Slot s = std::move(At(base_));
      if (!s.done) s.lost = true;
      s.raw_step = s.step;
      if (!renumbered_.empty()) {
        renumbered_.erase(renumbered_.begin(), renumbered_.lower_bound(s.step));
        if (auto it = renumbered_.find(s.step); it != renumbered_.end()) s.step = it->second;
      }
      ready.push_back(std::move(s));
      ++base_;
      --size_;
    }
  }
  for (const Slot& s : ready) {
    if (current_ && current_->step != s.step) EmitCurrent();
    if (!current_) {
      current_.emplace();
      current_->step = s.step;
      current_raw_step_ = s.raw_step;
    }
    DigestRecord& d = *current_;
    const uint64_t i = d.kernel_hashes.size();
    if (s.nonfinite && !d.nonfinite) d.nonfinite = i;
    if (s.lost) ++d.lost;
    d.kernel_hashes.push_back(s.lost ? 0 : s.digest);
    d.names.push_back(NameId(s.name));
    digested_.fetch_add(1, std::memory_order_relaxed);
  }
  bool idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle = size_ == 0;
  }
  // The step's marker came and every launch of it is in: write it now.
  if (current_ && (final || (idle && current_->step <= ended_step_.load(std::memory_order_acquire)))) {
    EmitCurrent();
  }
}

}  // namespace numtrace::shim
