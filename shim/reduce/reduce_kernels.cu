// File: shim/reduce/reduce_kernels.cu
//
// The CUDA reduction kernels, compiled to a fatbin (cmake/cuda.cmake) and
// embedded in libnumtrace.so; launched through the driver API as described
// in batch_abi.h. Every floating-point step is the shared code of
// tile_reduce.h/partial.h with round-to-nearest intrinsics (and -fmad=false),
// so the bits equal ReduceHost's. The only atomic is the integer counter that
// elects the last block of an item; it decides who combines, never the order.
#include <cstdint>

#include "common/format/stats.h"
#include "shim/reduce/batch_abi.h"
#include "shim/reduce/partial.h"
#include "shim/reduce/tile_reduce.h"

namespace numtrace::shim {
namespace {

// The item whose tiles include block `tile`: items are sorted by first_tile.
__device__ uint32_t FindItem(const NtBatchItem* items, uint32_t count, uint64_t tile) {
  uint32_t lo = 0, hi = count - 1;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (items[mid].first_tile <= tile) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// Tile partials written by other blocks: read at L2 (past a stale L1).
__device__ Partial LoadPartialCG(const Partial* src) {
  Partial p;
  const auto* s = reinterpret_cast<const unsigned long long*>(src);
  auto* d = reinterpret_cast<unsigned long long*>(&p);
  for (int w = 0; w < kPartialWords; ++w) d[w] = __ldcg(s + w);
  return p;
}

__device__ void StorePartialCG(Partial* dst, const Partial& p) {
  const auto* s = reinterpret_cast<const unsigned long long*>(&p);
  auto* d = reinterpret_cast<unsigned long long*>(dst);
  for (int w = 0; w < kPartialWords; ++w) __stcg(d + w, s[w]);
}

__device__ void BlockTree(Partial* lanes, uint32_t lane) {
  for (uint32_t s = kLanes / 2; s >= 1; s /= 2) {
    TreeStep(lanes, lane, s);
    __syncthreads();
  }
}

}  // namespace
}  // namespace numtrace::shim

using numtrace::BufferStats;
using numtrace::DType;
using namespace numtrace::shim;

extern "C" __global__ void __launch_bounds__(kLanes)
numtrace_reduce_batch(const NtBatchItem* items, uint32_t item_count, Partial* tile_partials,
                      uint32_t* counters, BufferStats* results) {
  __shared__ Partial lanes[kLanes];
  __shared__ bool is_last;
  const uint32_t lane = threadIdx.x;
  const uint64_t block = blockIdx.x;
  const uint32_t item_index = FindItem(items, item_count, block);
  const NtBatchItem item = items[item_index];
  const DType dtype = static_cast<DType>(item.dtype);
  const auto* data = reinterpret_cast<const uint8_t*>(item.address);
  const uint64_t tile = block - item.first_tile;

  // Level 1: this block's tile.
  lanes[lane] = FoldLane(data, item.bytes, dtype, tile, lane);
  __syncthreads();
  BlockTree(lanes, lane);
  if (lane == 0) {
    StorePartialCG(&tile_partials[block], lanes[0]);
    __threadfence();  // the partial is visible before the counter says so
    const uint32_t done = atomicAdd(&counters[item_index], 1u);
    is_last = done + 1 == item.tile_count;
  }
  __syncthreads();
  if (!is_last) return;

  // Level 2: the last block of the item combines its tile partials.
  __threadfence();
  const Partial* first = tile_partials + item.first_tile;
  lanes[lane] = FoldTilePartials([first](uint64_t i) { return LoadPartialCG(first + i); },
                                 item.tile_count, lane);
  __syncthreads();
  BlockTree(lanes, lane);
  if (lane == 0) {
    results[item.result_slot] =
        Finalize(lanes[0], ElementCount(item.bytes, dtype), item.bytes, dtype);
    counters[item_index] = 0;  // ready for the next launch / graph replay
  }
}
