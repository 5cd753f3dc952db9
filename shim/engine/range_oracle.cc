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

void StepRangeCache::Forget(uint64_t address, uint64_t bytes) {
  const uint64_t end = address + std::max<uint64_t>(bytes, 1);
  std::lock_guard<std::mutex> lock(mu_);
  // The range that starts before `address` and reaches into it, then every
  // one starting inside [address, end).
  auto it = ranges_.upper_bound(address);
  if (it != ranges_.begin() && address < std::prev(it)->second.end()) --it;
  while (it != ranges_.end() && it->first < end) it = ranges_.erase(it);
  if (bytes == 0) {
    refused_.erase(address);
  } else {
    std::erase_if(refused_, [&](uint64_t v) { return v >= address && v < end; });
  }
}

void StepRangeCache::NewStep() {
  std::lock_guard<std::mutex> lock(mu_);
  ranges_.clear();
  refused_.clear();
  inner_->NewStep();
}

}  // namespace numtrace::shim
