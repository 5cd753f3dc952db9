// File: common/format/capture_counter_list.h
//
// THE list of the capture layer's footer counters (docs/format.md, "Footer
// counters"), after Perfetto's stats.h: each counter once, with its
// enumerator, its JSON name in the footer's "counters" object, its severity
// and its description. The shim's runtime counters
// (shim/engine/capture_counters.h), the analyzer's capture warnings and the
// doctor take the counters from here, so a name is typed once; docs/format.md's
// table and test/gpu/check_trace.py's ERROR_COUNTERS are checked against it
// (test/shim/engine/capture_counters_test.cc). Header only, standard C++:
// libnumtrace.so includes it.
//
// Severity says what a non-zero value means for the user:
//   info       bookkeeping: which CUDA paths fired, how much memory was used;
//   data_loss  part of the capture is missing or coarser (launches dropped,
//              kernels or buffers not measured);
//   error      numtrace could not work in part of the process.
//
// Example:
//   CaptureCounterName(CaptureCounter::kRingFull);      // "ring_full"
//   CaptureCounterSeverity(CaptureCounter::kRingFull);  // CounterSeverity::kDataLoss
//   EnumFromName<CaptureCounter>(kCaptureCounterNames, "ring_full");
#ifndef NUMTRACE_COMMON_FORMAT_CAPTURE_COUNTER_LIST_H_
#define NUMTRACE_COMMON_FORMAT_CAPTURE_COUNTER_LIST_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "common/format/enum_list.h"

// X(enumerator, json_name, severity, description). The footer writes them in
// this order; docs/format.md's table has one row per entry, in this order,
// with the same severity and description.
#define NUMTRACE_CAPTURE_COUNTERS(X) \
  X(kLaunchesSeen, "launches_seen", kInfo, \
    "kernel launches handed to the engine (every path)") \
  X(kLaunchesNoLayout, "launches_no_layout", kDataLoss, \
    "launches whose parameter layout was unknown (driver refused, or a runtime launch known only by its host stub): listed without buffers") \
  X(kParamsPackFailed, "params_pack_failed", kDataLoss, \
    "launches whose parameter bytes could not be read (no `kernelParams`, no usable `extra`)") \
  X(kParamsExtraShort, "params_extra_short", kInfo, \
    "launches whose `extra` buffer was shorter than the layout (NCCL's one 4 KiB argument block): every parameter was scanned as far as the buffer went") \
  X(kCaptureQueries, "capture_queries", kInfo, \
    "`cuStreamIsCapturing` calls made for captured launches") \
  X(kDriverLaunches, "driver_launches", kInfo, \
    "successful driver launch callbacks (`cuLaunchKernel`, `Ex`, `Cooperative`, with `_ptsz`)") \
  X(kRuntimeLaunches, "runtime_launches", kInfo, \
    "runtime launch callbacks completed (`cudaLaunchKernel`, `ExC`, `Cooperative`, `__cudaLaunchKernel`, with `_ptsz`)") \
  X(kRuntimeWithoutDriver, "runtime_without_driver", kInfo, \
    "successful runtime launches inside which no driver callback fired: decoded from the runtime parameters instead") \
  X(kRuntimeDecoded, "runtime_decoded", kInfo, \
    "of those, launches the fallback decoding turned into an event") \
  X(kRuntimeCorrelationDiffers, "runtime_correlation_differs", kInfo, \
    "runtime launches whose nested driver callback had another correlation id") \
  X(kRuntimeAllocsWithoutDriver, "runtime_allocs_without_driver", kInfo, \
    "runtime allocations/frees inside which no driver callback fired (taken from the runtime parameters)") \
  X(kGraphLaunches, "graph_launches", kInfo, \
    "`cuGraphLaunch` calls (their kernels are not measured one by one)") \
  X(kLaunchesPaused, "launches_paused", kInfo, \
    "kernel and graph launches made while measurement was paused on their thread (`numtrace_pause`; the hooks pause around Inductor's and Triton's benchmarking): neither measured nor counted as launches") \
  X(kPoolTrims, "pool_trims", kInfo, \
    "`cuMemPoolTrimTo`/`cudaMemPoolTrimTo` calls seen (each clears the step's cached driver ranges)") \
  X(kNvtxRanges, "nvtx_ranges", kInfo, \
    "NVTX range pushes and pops passed to the step tracker") \
  X(kContextsCreated, "contexts_created", kInfo, \
    "CUDA contexts created (CUPTI resource callback; bookkeeping only)") \
  X(kContextsPrepared, "contexts_prepared", kInfo, \
    "contexts numtrace prepared (reduction kernel, rings) at their first measurement") \
  X(kContextsFailed, "contexts_failed", kError, \
    "contexts whose preparation failed: nothing measured in them") \
  X(kActivityUnavailable, "activity_unavailable", kDataLoss, \
    "1 when CUPTI refused kernel activity records: `unmeasured` is then unknown, not zero") \
  X(kActivityKernels, "activity_kernels", kInfo, \
    "kernel activity records received") \
  X(kActivityInternalLaunches, "activity_internal_launches", kInfo, \
    "`INTERNAL_LAUNCH_API` records: launches made outside any public API call") \
  X(kActivityDropped, "activity_dropped", kDataLoss, \
    "activity records CUPTI dropped (buffers full)") \
  X(kKernelsUnmeasured, "kernels_unmeasured", kDataLoss, \
    "kernels that ran in captured steps (in watch mode: in any step) whose launch numtrace never saw (notes of kind `unmeasured` name them)") \
  X(kKernelsInGraphs, "kernels_in_graphs", kDataLoss, \
    "kernels that ran inside CUDA graph launches during captured steps") \
  X(kKernelsLate, "kernels_late", kDataLoss, \
    "kernel activity records that came after their launch's correlation id had been forgotten (kept for 8 step ends: the host ran further ahead of the GPU than that); neither matched nor counted as unmeasured") \
  X(kBuffersFromDriver, "buffers_from_driver", kInfo, \
    "buffers found through the driver's range (`cuPointerGetAttributes`) because no allocation callback had reported them") \
  X(kRangesConfirmed, "ranges_confirmed", kInfo, \
    "buffers whose range the driver confirmed before a reduction read them") \
  X(kRangesUnconfirmed, "ranges_unconfirmed", kDataLoss, \
    "buffers the driver did not confirm as mapped device memory of that size") \
  X(kBuffersSkipped, "buffers_skipped", kDataLoss, \
    "buffers not read because of that (their stats show `n` = 0)") \
  X(kRangesOtherDevice, "ranges_other_device", kDataLoss, \
    "buffers the driver places on another GPU than the launch's (one process driving several GPUs): never read, measured over zero bytes (also counted in `buffers_skipped`)") \
  X(kRangesUnmapped, "ranges_unmapped", kDataLoss, \
    "pointers inside a range `cuPointerGetAttributes` reports that `cuMemGetAddressRange` does not map there (a VMM or pool reservation mapped in part): refused, never read") \
  X(kDriverBuffersCapped, "driver_buffers_capped", kDataLoss, \
    "buffers found only through the driver lookup whose mapped range exceeds 1 GiB (a pool segment, not a tensor): refused") \
  X(kTensorEvents, "tensor_events", kInfo, \
    "blocks and segments a framework allocator reported through `numtrace_tensor_event` (the PyTorch hooks, from the caching allocator's trace, `NUMTRACE_ALLOCATOR=caching`); 0 in a PyTorch job means the tensor map was never attached (a note says why)") \
  X(kPointersOutsideTensors, "pointers_outside_tensors", kInfo, \
    "candidate pointers inside a reported allocator segment but in no live block (memory the allocator holds free, or a stale word): refused, never measured as the segment") \
  X(kRingChunks, "ring_chunks", kInfo, \
    "chunks of device memory the reduction rings were made of (the first per context, then one per growth)") \
  X(kRingBytes, "ring_bytes", kInfo, \
    "the most device memory the reduction rings of all contexts held at once") \
  X(kRingFull, "ring_full", kDataLoss, \
    "measurements refused because the ring was full (it grows only on numtrace's own thread, never in the launch callback, and within its budget: `NUMTRACE_RING_MAX`, a 32nd of the GPU's memory, a tenth of the GPU left free): their launches are dropped whole (footer `dropped`)") \
  X(kRingGrowthRefused, "ring_growth_refused", kInfo, \
    "growths a refused measurement asked for that the budget did not allow (read from the GPU's free memory at that moment)") \
  X(kRingChunksFreed, "ring_chunks_freed", kInfo, \
    "grown chunks given back to the GPU after staying empty (about 5 s)") \
  X(kDeviceUnprepared, "device_unprepared", kDataLoss, \
    "measurements refused because their CUDA context was being prepared by another thread or could not be prepared (their launches are dropped)") \
  X(kDeviceErrors, "device_errors", kDataLoss, \
    "measurements refused because a driver call failed while queueing them (no event, a failed copy or launch)") \
  X(kExitWaitExpired, "exit_wait_expired", kDataLoss, \
    "waits for the GPU (at exit, or at a context's destruction) that reached `NUMTRACE_EXIT_WAIT` (10 s) before the work finished: the launches still unmeasured are written as dropped") \
  X(kProvenanceCapped, "provenance_capped", kDataLoss, \
    "provenance names cut to 512 bytes, or pushed deeper than 256 levels (kept as depth only)") \
  X(kProvenanceUnmatchedPops, "provenance_unmatched_pops", kInfo, \
    "scope or op pops without a push on that thread (ignored)")

#define NUMTRACE_COUNTER_SEVERITIES(X) \
  X(kInfo, "info")                     \
  X(kDataLoss, "data_loss")            \
  X(kError, "error")

namespace numtrace {

enum class CounterSeverity : uint8_t { NUMTRACE_COUNTER_SEVERITIES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kCounterSeverityNames[] = {NUMTRACE_COUNTER_SEVERITIES(NUMTRACE_ENUM_NAME)};

// kCount is the number of counters, not a counter (the shim sizes its array
// of atomics with it).
enum class CaptureCounter : uint8_t { NUMTRACE_CAPTURE_COUNTERS(NUMTRACE_ENUMERATOR) kCount };

inline constexpr std::string_view kCaptureCounterNames[] = {NUMTRACE_CAPTURE_COUNTERS(NUMTRACE_ENUM_NAME)};

#define NUMTRACE_COUNTER_SEVERITY_OF(id, name, severity, description) CounterSeverity::severity,
inline constexpr CounterSeverity kCaptureCounterSeverities[] = {NUMTRACE_CAPTURE_COUNTERS(NUMTRACE_COUNTER_SEVERITY_OF)};
#undef NUMTRACE_COUNTER_SEVERITY_OF

#define NUMTRACE_COUNTER_DESCRIPTION_OF(id, name, severity, description) description,
inline constexpr std::string_view kCaptureCounterDescriptions[] = {
    NUMTRACE_CAPTURE_COUNTERS(NUMTRACE_COUNTER_DESCRIPTION_OF)};
#undef NUMTRACE_COUNTER_DESCRIPTION_OF

static_assert(std::size(kCaptureCounterNames) == static_cast<size_t>(CaptureCounter::kCount));

// The JSON name of `c` ("unknown" for kCount or an out-of-range value).
constexpr std::string_view CaptureCounterName(CaptureCounter c) {
  const size_t i = static_cast<size_t>(c);
  return i < std::size(kCaptureCounterNames) ? kCaptureCounterNames[i] : std::string_view("unknown");
}
constexpr CounterSeverity CaptureCounterSeverity(CaptureCounter c) {
  const size_t i = static_cast<size_t>(c);
  return i < std::size(kCaptureCounterSeverities) ? kCaptureCounterSeverities[i] : CounterSeverity::kInfo;
}
constexpr std::string_view CaptureCounterDescription(CaptureCounter c) {
  const size_t i = static_cast<size_t>(c);
  return i < std::size(kCaptureCounterDescriptions) ? kCaptureCounterDescriptions[i] : std::string_view();
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_CAPTURE_COUNTER_LIST_H_
