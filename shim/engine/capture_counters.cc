// File: shim/engine/capture_counters.cc
//
// Names and snapshot of the footer counters; see capture_counters.h.
#include "shim/engine/capture_counters.h"

namespace numtrace::shim {

const char* CounterName(Counter c) {
  static constexpr const char* kNames[] = {
#define NUMTRACE_NAME(e, name) name,
      NUMTRACE_CAPTURE_COUNTERS(NUMTRACE_NAME)
#undef NUMTRACE_NAME
  };
  size_t i = static_cast<size_t>(c);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

CaptureCounters& CaptureCounters::Get() {
  static CaptureCounters* counters = new CaptureCounters();  // callbacks may run during exit
  return *counters;
}

std::vector<std::pair<std::string, uint64_t>> CaptureCounters::Snapshot() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  out.reserve(values_.size());
  for (size_t i = 0; i < values_.size(); ++i) {
    out.emplace_back(CounterName(static_cast<Counter>(i)), values_[i].load(std::memory_order_relaxed));
  }
  return out;
}

void CaptureCounters::Reset() {
  for (auto& v : values_) v.store(0, std::memory_order_relaxed);
}

}  // namespace numtrace::shim
