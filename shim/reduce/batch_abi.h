// File: shim/reduce/batch_abi.h
//
// The binary interface between the host code that launches the reduction
// kernels (shim/device/cuda_device.*) and the kernels themselves
// (reduce_kernels.cu, embedded as a fatbin: ReductionFatbin()). Plain structs
// with fixed-width fields, compiled identically by g++ and nvcc.
//
// How to launch (one launch measures every buffer of one intercepted kernel):
//   1. Load once per process: cuLibraryLoadData(&lib, ReductionFatbin().data(),
//      ...), cuLibraryGetKernel(&k, lib, kReduceBatchKernelName).
//   2. Fill NtBatchItem items[m] (address, bytes, dtype, result_slot) and call
//      uint64_t tiles = NtPlanBatch(items, m), which sets first_tile and
//      tile_count. Copy the items to device memory (a pinned host buffer or
//      a device staging area; cuMemcpyHtoDAsync on the launch's stream).
//   3. Scratch, owned by ONE stream (launches on a stream run in order, two
//      streams must not share it):
//        tile partials: NtScratchBytes(tiles) bytes, 8-byte aligned, any content;
//        counters: one uint32_t per item, ZERO before the first use (cuMemsetD32
//        at allocation). The kernel sets each back to 0 when it finishes, so
//        they stay ready for the next launch and for CUDA graph replays.
//   4. cuLaunchKernel((CUfunction)k, gridX = tiles, 1, 1, blockX = kNtBlockThreads
//      (256), 1, 1, sharedMem = 0 (static only), stream, params, nullptr) with
//        void* params[] = {&items_dev, &item_count, &partials_dev, &counters_dev,
//                          &results_dev};
//      types: const NtBatchItem*, uint32_t, Partial*, uint32_t*, BufferStats*.
//      tiles must be <= 2^31 - 1 (8 TiB of raw bytes); split the batch otherwise.
//   5. Results: results_dev[item.result_slot] receives the final BufferStats
//      (sizeof 104, the host layout of common/format/stats.h), written by the
//      last block of that item. It is complete when the launch has completed
//      in stream order (event or cuLaunchHostFunc after it); results_dev may be
//      device memory copied back, or mapped pinned host memory read directly.
//
// Example:
//   NtBatchItem it[2] = {{a, 4096, 0, 0, (uint32_t)DType::kBF16, 0, 0},
//                        {b, 100, 0, 0, (uint32_t)DType::kF32, 1, 0}};
//   uint64_t tiles = NtPlanBatch(it, 2);  // 1 + 1 blocks
#ifndef NUMTRACE_SHIM_REDUCE_BATCH_ABI_H_
#define NUMTRACE_SHIM_REDUCE_BATCH_ABI_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/format/stats.h"
#include "shim/reduce/partial.h"
#include "shim/reduce/tile_reduce.h"

namespace numtrace::shim {

inline constexpr char kReduceBatchKernelName[] = "numtrace_reduce_batch";
inline constexpr uint32_t kNtBlockThreads = kLanes;

struct NtBatchItem {
  uint64_t address;      // device address of the first byte
  uint64_t bytes;        // bytes to measure (0 is fine: n = 0, hash of nothing)
  uint64_t first_tile;   // set by NtPlanBatch: sum of tile_count of items before
  uint64_t tile_count;   // set by NtPlanBatch: TileCount(bytes, dtype) >= 1
  uint32_t dtype;        // a numtrace::DType value
  uint32_t result_slot;  // index into the results array
  uint64_t reserved;     // 0
};
static_assert(sizeof(NtBatchItem) == 48, "NtBatchItem layout is an ABI");
static_assert(sizeof(BufferStats) == 104, "BufferStats layout is an ABI");
static_assert(sizeof(Partial) == 96, "Partial layout is an ABI");

// Fills first_tile/tile_count; returns the grid size (total tiles).
inline uint64_t NtPlanBatch(NtBatchItem* items, uint32_t count) {
  uint64_t next = 0;
  for (uint32_t i = 0; i < count; ++i) {
    items[i].first_tile = next;
    items[i].tile_count = TileCount(items[i].bytes, static_cast<DType>(items[i].dtype));
    next += items[i].tile_count;
  }
  return next;
}

inline uint64_t NtScratchBytes(uint64_t tiles) { return tiles * sizeof(Partial); }

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_REDUCE_BATCH_ABI_H_
