// File: shim/engine/capture_counters.h
//
// The capture layer's counters at run time, written to the trace footer as
// the object "counters" (docs/format.md, footer) so a trace says how
// complete it is: how many launches were seen, how many could not be
// decoded, how many kernels ran unmeasured. The counters themselves (names,
// order, severity, description) are the one list in
// common/format/capture_counter_list.h; this file holds their values.
//
// Process-wide (the CUPTI layer exists before the engine and outlives it);
// every counter is a relaxed atomic, so counting costs one uncontended add.
//
// Example:
//   CaptureCounters::Get().Add(Counter::kLaunchesSeen);
//   for (auto& [name, value] : CaptureCounters::Get().Snapshot()) ...
#ifndef NUMTRACE_SHIM_ENGINE_CAPTURE_COUNTERS_H_
#define NUMTRACE_SHIM_ENGINE_CAPTURE_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/format/capture_counter_list.h"

namespace numtrace::shim {

// The shim's name for the common list's enumeration.
using Counter = ::numtrace::CaptureCounter;

class CaptureCounters {
 public:
  static CaptureCounters& Get();

  void Add(Counter c, uint64_t n = 1) {
    values_[static_cast<size_t>(c)].fetch_add(n, std::memory_order_relaxed);
  }
  // Sets a flag-like counter (kActivityUnavailable).
  void Set(Counter c, uint64_t v) { values_[static_cast<size_t>(c)].store(v, std::memory_order_relaxed); }
  uint64_t value(Counter c) const { return values_[static_cast<size_t>(c)].load(std::memory_order_relaxed); }

  // Every counter, in list order, for FooterRecord::counters.
  std::vector<std::pair<std::string, uint64_t>> Snapshot() const;
  // Tests only: back to zero.
  void Reset();

 private:
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> values_{};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_CAPTURE_COUNTERS_H_
