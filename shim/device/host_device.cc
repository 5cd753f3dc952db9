// File: shim/device/host_device.cc
#include "shim/device/host_device.h"

#include <utility>

#include "shim/reduce/host_reduce.h"

namespace numtrace::shim {

bool HostDevice::Enqueue(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_next_ > 0) {
      --fail_next_;
      ++rejected_;
      return false;
    }
    if (capacity_ != 0 && ready_.size() + held_.size() >= capacity_) {
      ++rejected_;
      return false;
    }
  }
  // Measure outside the lock: other threads may enqueue and poll meanwhile.
  Result r{ticket, {}};
  r.stats.reserve(items.size());
  for (const MeasureItem& item : items) {
    r.stats.push_back(
        ReduceHost(reinterpret_cast<const void*>(item.address), item.bytes, item.dtype));
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Re-check: a concurrent Enqueue may have filled the ring while we measured.
  if (capacity_ != 0 && ready_.size() + held_.size() >= capacity_) {
    ++rejected_;
    return false;
  }
  if (fail_results_ > 0) {
    --fail_results_;
    r.failed = true;
    r.stats.clear();
  }
  (hold_ ? held_ : ready_).push_back(std::move(r));
  ++enqueued_;
  return true;
}

void HostDevice::Poll(const ResultFn& fn) {
  std::deque<Result> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(ready_);
  }
  // Called without the lock so fn may enqueue more work.
  for (const Result& r : out) fn(r.ticket, r.stats, r.failed);
}

void HostDevice::Drain() {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseHeldLocked();
}

bool HostDevice::EnqueueCopy(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket) {
  (void)stream;
  Copy c{ticket, {}};
  c.items.reserve(items.size());
  for (const MeasureItem& item : items) {
    const auto* p = reinterpret_cast<const uint8_t*>(item.address);
    c.items.emplace_back(p, p + item.bytes);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (corrupt_next_ > 0) {
    --corrupt_next_;
    for (auto& bytes : c.items) {
      if (!bytes.empty()) bytes[0] ^= 0xff;
    }
  }
  copies_.push_back(std::move(c));
  return true;
}

void HostDevice::PollCopies(const CopyFn& fn, bool wait) {
  (void)wait;  // host copies are done when queued
  std::deque<Copy> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(copies_);
  }
  for (const Copy& c : out) {
    for (size_t i = 0; i < c.items.size(); ++i) fn(c.ticket, i, c.items[i], false);
  }
}

void HostDevice::CorruptNextCopies(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  corrupt_next_ = n;
}

void HostDevice::FailNextResults(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_results_ = n;
}

void HostDevice::FailNextEnqueues(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = n;
}

void HostDevice::SetCapacity(size_t tickets) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = tickets;
}

void HostDevice::SetHoldResults(bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ = hold;
  if (!hold) ReleaseHeldLocked();
}

uint64_t HostDevice::enqueued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enqueued_;
}

uint64_t HostDevice::rejected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rejected_;
}

void HostDevice::ReleaseHeldLocked() {
  while (!held_.empty()) {
    ready_.push_back(std::move(held_.front()));
    held_.pop_front();
  }
}

}  // namespace numtrace::shim
