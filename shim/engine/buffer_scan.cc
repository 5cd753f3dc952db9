#include "shim/engine/buffer_scan.h"

#include <algorithm>
#include <cstring>

#include "shim/engine/capture_counters.h"

namespace numtrace::shim {

void ScanBuffers(std::span<const uint8_t> params, std::span<const ParamSlot> layout,
                 const AllocMap& allocs, std::vector<ScannedBuffer>* out, RangeOracle* oracle,
                 const TensorMap* tensors) {
  out->clear();
  for (uint32_t arg = 0; arg < layout.size(); ++arg) {
    const uint64_t slot_begin = layout[arg].offset;
    const uint64_t slot_end = std::min<uint64_t>(slot_begin + layout[arg].size, params.size());
    // Device pointers are 8-byte aligned within the packed parameters.
    for (uint64_t at = (slot_begin + 7) & ~uint64_t{7}; at + 8 <= slot_end; at += 8) {
      uint64_t v;
      std::memcpy(&v, params.data() + at, sizeof(v));
      const bool in_tensor_bounds = tensors != nullptr && tensors->MaybeInside(v);
      const bool in_map_bounds = allocs.MaybeInside(v);
      if (!in_map_bounds && !in_tensor_bounds && (oracle == nullptr || !PlausibleDevicePointer(v))) continue;
      // The same buffer is usually reached again at once (the previous hit).
      if (!out->empty() && v >= out->back().addr && v < out->back().addr + out->back().bytes) {
        continue;
      }
      bool seen = false;
      for (const ScannedBuffer& b : *out) {
        if (v >= b.addr && v < b.addr + b.bytes) { seen = true; break; }
      }
      if (seen) continue;
      std::optional<Allocation> a;
      if (in_tensor_bounds) {
        TensorMap::Resolution r = tensors->Resolve(v);
        if (r.outside_tensors) {
          CaptureCounters::Get().Add(Counter::kPointersOutsideTensors);
          continue;
        }
        a = r.block;
      }
      if (!a && in_map_bounds) a = allocs.Find(v);
      if (!a && oracle != nullptr && PlausibleDevicePointer(v)) {
        a = oracle->Confirm(v);
        if (a && a->bytes > kMaxDriverBufferBytes) {
          CaptureCounters::Get().Add(Counter::kDriverBuffersCapped);
          continue;
        }
        if (a) CaptureCounters::Get().Add(Counter::kBuffersFromDriver);
      }
      if (!a) continue;
      out->push_back({arg, a->start, v - a->start, a->bytes});
    }
  }
}

}  // namespace numtrace::shim
