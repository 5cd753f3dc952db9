// File: shim/engine/capture_counters.h
//
// The capture layer's counters, written to the trace footer as the object
// "counters" (docs/format.md, footer) so a trace says how complete it is:
// how many launches were seen, how many could not be decoded, how many
// kernels ran unmeasured. One list below gives the C++ name, the JSON
// spelling and the order; docs/format.md and docs/gpu.md explain each.
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

namespace numtrace::shim {

// X(enumerator, json_name). Keep docs/format.md's footer table in this order.
#define NUMTRACE_CAPTURE_COUNTERS(X)                             \
  X(kLaunchesSeen, "launches_seen")                              \
  X(kLaunchesNoLayout, "launches_no_layout")                     \
  X(kParamsPackFailed, "params_pack_failed")                     \
  X(kParamsExtraShort, "params_extra_short")                     \
  X(kCaptureQueries, "capture_queries")                          \
  X(kDriverLaunches, "driver_launches")                          \
  X(kRuntimeLaunches, "runtime_launches")                        \
  X(kRuntimeWithoutDriver, "runtime_without_driver")             \
  X(kRuntimeDecoded, "runtime_decoded")                          \
  X(kRuntimeCorrelationDiffers, "runtime_correlation_differs")   \
  X(kRuntimeAllocsWithoutDriver, "runtime_allocs_without_driver") \
  X(kGraphLaunches, "graph_launches")                            \
  X(kLaunchesPaused, "launches_paused")                          \
  X(kPoolTrims, "pool_trims")                                    \
  X(kNvtxRanges, "nvtx_ranges")                                  \
  X(kContextsCreated, "contexts_created")                        \
  X(kContextsPrepared, "contexts_prepared")                      \
  X(kContextsFailed, "contexts_failed")                          \
  X(kActivityUnavailable, "activity_unavailable")                \
  X(kActivityKernels, "activity_kernels")                        \
  X(kActivityInternalLaunches, "activity_internal_launches")     \
  X(kActivityDropped, "activity_dropped")                        \
  X(kKernelsUnmeasured, "kernels_unmeasured")                    \
  X(kKernelsInGraphs, "kernels_in_graphs")                       \
  X(kKernelsLate, "kernels_late")                                \
  X(kBuffersFromDriver, "buffers_from_driver")                  \
  X(kRangesConfirmed, "ranges_confirmed")                        \
  X(kRangesUnconfirmed, "ranges_unconfirmed")                    \
  X(kBuffersSkipped, "buffers_skipped")                          \
  X(kRangesOtherDevice, "ranges_other_device")                  \
  X(kRangesUnmapped, "ranges_unmapped")                          \
  X(kDriverBuffersCapped, "driver_buffers_capped")              \
  X(kTensorEvents, "tensor_events")                              \
  X(kPointersOutsideTensors, "pointers_outside_tensors")         \
  X(kRingChunks, "ring_chunks")                                  \
  X(kRingBytes, "ring_bytes")                                    \
  X(kRingFull, "ring_full")                                      \
  X(kRingGrowthRefused, "ring_growth_refused")                  \
  X(kRingChunksFreed, "ring_chunks_freed")                      \
  X(kDeviceUnprepared, "device_unprepared")                      \
  X(kDeviceErrors, "device_errors")                      \
  X(kExitWaitExpired, "exit_wait_expired")                      \
  X(kProvenanceCapped, "provenance_capped")                      \
  X(kProvenanceUnmatchedPops, "provenance_unmatched_pops")

enum class Counter : uint8_t {
#define NUMTRACE_ENUM(e, name) e,
  NUMTRACE_CAPTURE_COUNTERS(NUMTRACE_ENUM)
#undef NUMTRACE_ENUM
  kCount
};

// JSON spelling of `c`.
const char* CounterName(Counter c);

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
