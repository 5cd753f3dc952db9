// File: shim/reduce/host_reduce.h
//
// The host reference of the buffer reduction: the tile algorithm of
// tile_reduce.h run over host memory, on one thread (`threads` 1, the
// reference) or split over several by level-2 slot, which gives the same
// bits (each slot folds its tiles in the same order whoever runs it). Its results are the
// definition the CUDA kernels must reproduce bit for bit, and what HostDevice
// (and so every CPU test of the engine) measures with.
//
// Example:
//   std::vector<float> v = {1.f, -2.f, NAN};
//   BufferStats s = ReduceHost(v.data(), v.size() * 4, DType::kF32);
//   // s.n == 3, s.nan == 1, s.min == -2, s.max == 1, s.sum == -1
#ifndef NUMTRACE_SHIM_REDUCE_HOST_REDUCE_H_
#define NUMTRACE_SHIM_REDUCE_HOST_REDUCE_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/format/stats.h"
#include "shim/reduce/partial.h"

namespace numtrace::shim {

// Stats of the `bytes` bytes at `data` read as `dtype`. `data` may be null
// when bytes == 0; any alignment is fine. `threads` > 1: up to that many
// threads (the caller's among them) share a buffer big enough to be worth
// it (32 tiles, 128K elements, per thread); the result is bit-identical.
BufferStats ReduceHost(const void* data, uint64_t bytes, DType dtype, unsigned threads = 1);

// The final partial before Finalize (exact sums of squares etc.), for tests.
Partial ReduceHostPartial(const void* data, uint64_t bytes, DType dtype, unsigned threads = 1);

// The cores this process may run on (its affinity mask): the operator-level
// capture's `threads`.
unsigned HostReduceThreads();

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_REDUCE_HOST_REDUCE_H_
