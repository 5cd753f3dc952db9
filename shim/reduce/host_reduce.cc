// File: shim/reduce/host_reduce.cc
//
// Built with -ffp-contract=off (see CMakeLists.txt): a fused multiply-add
// would round x*x + s once instead of twice and part from the device bits.
#include "shim/reduce/host_reduce.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "shim/reduce/tile_reduce.h"

namespace numtrace::shim {
namespace {

// Level 1 and the streamed level 2 for the level-2 slots [first, last):
// tile t lands in slot t % 256 in increasing t, exactly FoldTilePartials'
// order, without keeping every tile partial. Slots are disjoint between
// workers, so any split of [0, 256) gives the same slots, bit for bit.
void FoldSlots(const uint8_t* p, uint64_t bytes, DType dtype, uint64_t tiles, uint32_t first, uint32_t last,
               Partial* level2) {
  Partial lanes[kLanes];
  for (uint32_t slot = first; slot < last; ++slot) {
    for (uint64_t t = slot; t < tiles; t += kLanes) {
      for (uint32_t l = 0; l < kLanes; ++l) lanes[l] = FoldLane(p, bytes, dtype, t, l);
      TreeCombine(lanes);
      level2[slot] = Combine(level2[slot], lanes[0]);
    }
  }
}

// Tiles per worker below which a thread costs more than it saves (a thread
// start is ~20 us; a tile of f32 is 16 KiB, ~4 us of reduction).
constexpr uint64_t kMinTilesPerWorker = 32;

}  // namespace

unsigned HostReduceThreads() {
  static const unsigned n = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return n;
}

Partial ReduceHostPartial(const void* data, uint64_t bytes, DType dtype, unsigned threads) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint64_t tiles = TileCount(bytes, dtype);
  Partial level2[kLanes];
  for (uint32_t l = 0; l < kLanes; ++l) level2[l] = EmptyPartial();
  // Never more workers than slots holding tiles, nor than the size is worth.
  uint64_t workers = std::min<uint64_t>({threads == 0 ? 1 : threads, kLanes, tiles / kMinTilesPerWorker});
  if (workers <= 1) {
    FoldSlots(p, bytes, dtype, tiles, 0, kLanes, level2);
  } else {
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    auto range = [&](uint64_t w) { return static_cast<uint32_t>(w * kLanes / workers); };
    try {
      for (uint64_t w = 1; w < workers; ++w) {
        pool.emplace_back(FoldSlots, p, bytes, dtype, tiles, range(w), range(w + 1), level2);
      }
    } catch (const std::system_error&) {
      // No thread to be had (limits): the slots of the missing workers run here.
      for (uint64_t w = pool.size() + 1; w < workers; ++w) FoldSlots(p, bytes, dtype, tiles, range(w), range(w + 1), level2);
    }
    FoldSlots(p, bytes, dtype, tiles, 0, range(1), level2);
    for (std::thread& t : pool) t.join();
  }
  TreeCombine(level2);
  return level2[0];
}

BufferStats ReduceHost(const void* data, uint64_t bytes, DType dtype, unsigned threads) {
  return Finalize(ReduceHostPartial(data, bytes, dtype, threads), ElementCount(bytes, dtype), bytes, dtype);
}

}  // namespace numtrace::shim
