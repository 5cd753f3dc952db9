// File: analyzer/report/capture_warnings.cc
//
// Footer-counter warnings; see capture_warnings.h.
#include "analyzer/report/capture_warnings.h"

#include <cstdint>

#include "common/format/capture_counter_list.h"

namespace numtrace::analyzer {
namespace {

// 0 when the trace has no footer or its footer lacks the counter.
uint64_t Count(const Trace& t, CaptureCounter c) {
  return t.footer ? t.footer->CounterValue(c).value_or(0) : 0;
}

std::string NameOf(CaptureCounter c) { return std::string(CaptureCounterName(c)); }

}  // namespace

std::vector<std::string> CaptureWarnings(const Trace& t, std::string_view side) {
  std::vector<std::string> out;
  const uint64_t seen = Count(t, CaptureCounter::kLaunchesSeen);
  const uint64_t no_layout = Count(t, CaptureCounter::kLaunchesNoLayout);
  // Most launches without a layout: their kernels have no buffers, so the
  // diff compares names and geometry only.
  if (seen > 0 && no_layout * 2 > seen) {
    out.push_back(std::string(side) + ": " + std::to_string(no_layout) + " of " + std::to_string(seen) +
                  " launches had no parameter layout (" + NameOf(CaptureCounter::kLaunchesNoLayout) +
                  "): their kernels carry no buffers, so this diff compares names, not numbers (docs/gpu.md)");
  }
  for (const NoteRecord& n : t.notes) {
    if (n.kind != kNoteTensorMap || n.name != TensorMapStateName(TensorMapState::kNotAttached)) continue;
    out.push_back(std::string(side) +
                  ": the PyTorch tensor map was not attached, so buffers inside the caching allocator's "
                  "segments are whole segments and will not match a capture whose map attached (the trace's "
                  "tensor_map note says why; docs/configuration.md, the allocator)");
    break;
  }
  if (const uint64_t full = Count(t, CaptureCounter::kRingFull)) {
    out.push_back(std::string(side) + ": " + std::to_string(full) + " measurements were refused by a full device ring (" +
                  NameOf(CaptureCounter::kRingFull) +
                  "): those launches were dropped (NUMTRACE_DEVICE_MEMORY, docs/gpu.md)");
  }
  return out;
}

}  // namespace numtrace::analyzer
