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

StepWatch::StepWatch(WatchMode mode, uint64_t min_bytes, Device* device, RecordSink* sink)
    : mode_(mode), min_bytes_(min_bytes), device_(device), sink_(sink) {}

void StepWatch::OnLaunch(const LaunchEvent& launch, const KernelInfo& kernel, int64_t step,
                         const AllocMap& allocs, RangeOracle* ranges, const TensorMap* tensors) {
  if (step < 0) return;
  uint64_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (size_ == ring_.size()) GrowLocked();
    index = base_ + size_++;
    At(index) = Slot{step, step, &kernel};
  }
  // Measuring into a capturing stream would add our work to the user's graph.
  bool queued = false;
  if (launch.decoded && !launch.stream_capturing) {
    Items& it = *ThreadItems();
    ScanBuffers(launch.params, launch.layout, allocs, &it.scanned, ranges, tensors);
    BuildPlan(it.scanned, kernel, min_bytes_, &it.plan);
    std::span<const MeasureItem> items = it.plan.items;
    if (mode_ == WatchMode::kSampled) {
      it.sampled.clear();
      SampleWindow w[kSampleWindows];
      for (const MeasureItem& m : it.plan.items) {
        const uint32_t n = SampleWindows(m.bytes, w);
        for (uint32_t i = 0; i < n; ++i) it.sampled.push_back({m.address + w[i].offset, w[i].bytes, m.dtype});
      }
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
  if (failed) {
    At(index).done = At(index).lost = true;
    return;
  }
  Finish(&At(index), stats);
}

void StepWatch::GrowLocked() {
  std::vector<Slot> bigger(ring_.size() * 2);
  for (uint64_t i = base_; i < base_ + size_; ++i) bigger[i & (bigger.size() - 1)] = At(i);
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

uint64_t StepWatch::NameId(const KernelInfo* kernel) {
  auto [it, inserted] = name_ids_.emplace(kernel, next_name_id_);
  if (inserted) {
    ++next_name_id_;
    sink_->Push(KernelNameRecord{it->second, kernel->symbol});
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
      Slot s = At(base_);
      if (!s.done) s.lost = true;
      s.raw_step = s.step;
      if (!renumbered_.empty()) {
        renumbered_.erase(renumbered_.begin(), renumbered_.lower_bound(s.step));
        if (auto it = renumbered_.find(s.step); it != renumbered_.end()) s.step = it->second;
      }
      ready.push_back(s);
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
    d.names.push_back(NameId(s.kernel));
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
