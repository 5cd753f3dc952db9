// File: shim/engine/buffer_scan.h
//
// Finds the device buffers a launch's arguments point into. The driver gives
// only offsets and sizes of parameters, no types, so every 8-byte-aligned
// 8-byte word inside each parameter slot is read as a candidate pointer and
// looked up in the allocation map. Scanning whole slots (not just 8-byte
// ones) finds pointers inside struct parameters: PyTorch passes pointer
// arrays and offset calculators by value. One entry per distinct buffer: the
// first argument (and the first pointer in it) that reaches it wins. A
// candidate the map does not know is asked of `oracle` when one is given
// (range_oracle.h: the driver's own range, for allocations no callback
// reported). A range found only that way and larger than
// kMaxDriverBufferBytes is refused (counter driver_buffers_capped): a stale
// word pointing into a pool segment or a reservation would otherwise turn a
// whole segment into one "buffer".
//
// With `tensors` (tensor_map.h: the blocks a framework allocator reported),
// a pointer into a live block is that block; one into a reported segment
// but no live block is refused (counter pointers_outside_tensors); others go
// to `allocs` as before.
//
// Example:
//   std::vector<ScannedBuffer> found;
//   ScanBuffers(launch.params, launch.layout, allocs, &found);
//   found[0].arg;     // index of the parameter holding the pointer
//   found[0].offset;  // pointer - allocation start
#ifndef NUMTRACE_SHIM_ENGINE_BUFFER_SCAN_H_
#define NUMTRACE_SHIM_ENGINE_BUFFER_SCAN_H_

#include <cstdint>
#include <span>
#include <vector>

#include "shim/engine/alloc_map.h"
#include "shim/engine/events.h"
#include "shim/engine/range_oracle.h"
#include "shim/engine/tensor_map.h"

namespace numtrace::shim {

// The largest buffer taken from the driver lookup alone (1 GiB).
inline constexpr uint64_t kMaxDriverBufferBytes = 1ull << 30;

struct ScannedBuffer {
  uint32_t arg = 0;     // parameter index the pointer was found in
  uint64_t addr = 0;    // allocation start
  uint64_t offset = 0;  // pointer - addr
  uint64_t bytes = 0;   // allocation size
};

// Clears `out` and fills it in order of first appearance. Slots reaching past
// the end of `params` are scanned only as far as the bytes go; slots shorter
// than one aligned word hold no pointer and are skipped.
void ScanBuffers(std::span<const uint8_t> params, std::span<const ParamSlot> layout,
                 const AllocMap& allocs, std::vector<ScannedBuffer>* out,
                 RangeOracle* oracle = nullptr, const TensorMap* tensors = nullptr);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_BUFFER_SCAN_H_
