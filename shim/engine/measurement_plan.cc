#include "shim/engine/measurement_plan.h"

namespace numtrace::shim {

void BuildPlan(const std::vector<ScannedBuffer>& scanned, const KernelInfo& kernel,
               uint64_t min_bytes, MeasurementPlan* plan) {
  plan->buffers.clear();
  plan->items.clear();
  for (const ScannedBuffer& b : scanned) {
    if (b.bytes < min_bytes) continue;
    auto [dtype, from] = kernel.DTypeOf(b.arg);
    plan->buffers.push_back({b.arg, b.addr, b.offset, b.bytes, dtype, from});
    plan->items.push_back({b.addr, b.bytes, dtype});
  }
}

}  // namespace numtrace::shim
