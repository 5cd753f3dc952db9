// File: shim/cupti/kernel_activity_check.cc
//
// Matching kernel activity records to seen launches; see kernel_activity_check.h.
#include "shim/cupti/kernel_activity_check.h"

#include <algorithm>
#include <map>
#include <utility>

namespace numtrace::shim {
namespace {

// Windows remembered: enough for the steps whose records may still arrive.
constexpr size_t kMaxWindows = 64;

}  // namespace

void KernelActivityCheck::NoteLaunch(uint32_t correlation) {
  std::lock_guard<std::mutex> lock(mu_);
  ++notes_;
  seen_.ids.insert(correlation);
  seen_.highest = std::max(seen_.highest, correlation);
}

bool KernelActivityCheck::NotedLocked(uint32_t correlation) const {
  if (seen_.ids.count(correlation) != 0) return true;
  for (const Generation& g : kept_) {
    if (g.ids.count(correlation) != 0) return true;
  }
  return false;
}

void KernelActivityCheck::Window(bool open, uint32_t correlation) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool is_open = !windows_.empty() && windows_.back().end == kOpenEnd;
  if (open == is_open) return;
  if (open) {
    windows_.push_back({correlation, kOpenEnd});
    if (windows_.size() > kMaxWindows) windows_.pop_front();
  } else {
    windows_.back().end = correlation;
  }
}

bool KernelActivityCheck::InWindowLocked(uint32_t correlation) const {
  for (auto it = windows_.rbegin(); it != windows_.rend(); ++it) {
    if (correlation >= it->begin && correlation < it->end) return true;
  }
  return false;
}

void KernelActivityCheck::OnKernel(uint32_t correlation, std::string_view name, bool in_graph) {
  if (!own_kernel_.empty() && name == own_kernel_) return;
  std::lock_guard<std::mutex> lock(mu_);
  // Newer than the last closed window while none is open: a quiet step's
  // kernel. Dropped now so that uncaptured steps cost no memory.
  if (!windows_.empty() && windows_.back().end != kOpenEnd && correlation >= windows_.back().end) {
    ++outside_;
    return;
  }
  records_.push_back({correlation, in_graph, std::string(name)});
}

std::vector<KernelActivityCheck::Unmeasured> KernelActivityCheck::Settle() {
  std::map<std::pair<std::string, bool>, uint64_t> counts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Record& r : records_) {
      // Graph kernels carry the graph launch's correlation id, which the
      // switchboard saw as a graph launch, never as this kernel's launch.
      if (!r.in_graph && NotedLocked(r.correlation)) continue;
      if (!InWindowLocked(r.correlation)) {
        ++outside_;
        continue;
      }
      // Its launch may have been noted in a generation dropped since: the
      // host ran further ahead than kKeptGenerations steps.
      if (!r.in_graph && aged_ && r.correlation <= aged_through_) {
        ++late_;
        continue;
      }
      ++counts[{r.name.empty() ? std::string("(unnamed kernel)") : r.name, r.in_graph}];
    }
    records_.clear();
    // Per step, not per job: with NUMTRACE_STEPS=all the set would grow by
    // every launch of the run.
    kept_.push_back(std::move(seen_));
    seen_ = {};
    if (kept_.size() > kKeptGenerations - 1) {
      aged_through_ = aged_ ? std::max(aged_through_, kept_.front().highest) : kept_.front().highest;
      aged_ = true;
      kept_.pop_front();
    }
  }
  std::vector<Unmeasured> out;
  out.reserve(counts.size());
  for (auto& [key, n] : counts) out.push_back({key.first, n, key.second});
  return out;
}

uint64_t KernelActivityCheck::notes_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return notes_;
}

uint64_t KernelActivityCheck::launches_noted() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = seen_.ids.size();
  for (const Generation& g : kept_) n += g.ids.size();
  return n;
}

uint64_t KernelActivityCheck::TakeLate() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(late_, 0);
}

uint64_t KernelActivityCheck::records_outside() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outside_;
}

}  // namespace numtrace::shim
