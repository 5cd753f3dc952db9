// File: shim/reduce/host_reduce.cc
//
// Built with -ffp-contract=off (see CMakeLists.txt): a fused multiply-add
// would round x*x + s once instead of twice and part from the device bits.
#include "shim/reduce/host_reduce.h"

#include "shim/reduce/tile_reduce.h"

namespace numtrace::shim {

Partial ReduceHostPartial(const void* data, uint64_t bytes, DType dtype) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint64_t tiles = TileCount(bytes, dtype);
  // Level 2 streamed: tile t lands in lane t % 256 in increasing t, which is
  // exactly FoldTilePartials' order, without keeping every tile partial.
  Partial level2[kLanes];
  for (uint32_t l = 0; l < kLanes; ++l) level2[l] = EmptyPartial();
  Partial lanes[kLanes];
  for (uint64_t t = 0; t < tiles; ++t) {
    for (uint32_t l = 0; l < kLanes; ++l) lanes[l] = FoldLane(p, bytes, dtype, t, l);
    TreeCombine(lanes);
    Partial& slot = level2[t % kLanes];
    slot = Combine(slot, lanes[0]);
  }
  TreeCombine(level2);
  return level2[0];
}

BufferStats ReduceHost(const void* data, uint64_t bytes, DType dtype) {
  return Finalize(ReduceHostPartial(data, bytes, dtype), ElementCount(bytes, dtype), bytes,
                  dtype);
}

}  // namespace numtrace::shim
