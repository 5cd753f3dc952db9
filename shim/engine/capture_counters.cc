// File: shim/engine/capture_counters.cc
//
// The footer counters' values and snapshot; see capture_counters.h.
#include "shim/engine/capture_counters.h"

namespace numtrace::shim {

CaptureCounters& CaptureCounters::Get() {
  static CaptureCounters* counters = new CaptureCounters();  // callbacks may run during exit
  return *counters;
}

std::vector<std::pair<std::string, uint64_t>> CaptureCounters::Snapshot() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  out.reserve(values_.size());
  for (size_t i = 0; i < values_.size(); ++i) {
    out.emplace_back(std::string(CaptureCounterName(static_cast<Counter>(i))), values_[i].load(std::memory_order_relaxed));
  }
  return out;
}

void CaptureCounters::Reset() {
  for (auto& v : values_) v.store(0, std::memory_order_relaxed);
}

}  // namespace numtrace::shim
