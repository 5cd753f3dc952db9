// File: shim/engine/measurement_plan.h
//
// Turns the buffers a launch points into (buffer_scan.h) and what is known
// about its kernel (kernel_cache.h) into what to measure: one MeasureItem per
// buffer for the Device, and the record fields each result will fill. A
// buffer smaller than NUMTRACE_MIN_BYTES is left out entirely. The whole
// allocation is measured, not just the part after the pointer: a kernel may
// write anywhere in a buffer it was handed.
//
// Example:
//   MeasurementPlan plan;
//   BuildPlan(scanned, kernel_info, config.min_bytes, &plan);
//   device->Enqueue(stream, plan.items, ticket);
#ifndef NUMTRACE_SHIM_ENGINE_MEASUREMENT_PLAN_H_
#define NUMTRACE_SHIM_ENGINE_MEASUREMENT_PLAN_H_

#include <cstdint>
#include <vector>

#include "common/format/dtype.h"
#include "shim/engine/device.h"
#include "shim/engine/buffer_scan.h"
#include "shim/engine/kernel_cache.h"

namespace numtrace::shim {

struct PlannedBuffer {
  uint32_t arg = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  DType dtype = DType::kRaw;
  DTypeSource dtype_from = DTypeSource::kDefault;
};

struct MeasurementPlan {
  std::vector<PlannedBuffer> buffers;
  std::vector<MeasureItem> items;  // items[i] measures buffers[i]
};

// Clears and fills `plan`. Reuses its capacity, so a thread-local plan does
// not allocate once warm.
void BuildPlan(const std::vector<ScannedBuffer>& scanned, const KernelInfo& kernel,
               uint64_t min_bytes, MeasurementPlan* plan);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_MEASUREMENT_PLAN_H_
