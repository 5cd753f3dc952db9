// File: shim/engine/range_oracle.cc
//
// The per-step cache of driver-confirmed ranges; see range_oracle.h.
#include "shim/engine/range_oracle.h"

#include <iterator>

namespace numtrace::shim {

std::optional<Allocation> StepRangeCache::Confirm(uint64_t address) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ranges_.upper_bound(address);
    if (it != ranges_.begin()) {
      --it;
      if (address < it->second.end()) return it->second;
    }
    if (refused_.count(address) != 0) return std::nullopt;
    ++queries_;
  }
  // Outside the lock: the driver call may be slow, and answers are idempotent.
  std::optional<Allocation> a = inner_->Confirm(address);
  std::lock_guard<std::mutex> lock(mu_);
  if (a && a->bytes > 0) {
    ranges_[a->start] = *a;
  } else {
    refused_.insert(address);
    a.reset();
  }
  return a;
}

void StepRangeCache::Forget(uint64_t address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ranges_.upper_bound(address);
  if (it != ranges_.begin() && address < std::prev(it)->second.end()) ranges_.erase(std::prev(it));
  refused_.erase(address);
}

void StepRangeCache::NewStep() {
  std::lock_guard<std::mutex> lock(mu_);
  ranges_.clear();
  refused_.clear();
  inner_->NewStep();
}

}  // namespace numtrace::shim
