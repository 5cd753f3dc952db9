// File: test/shim/reduce/reduce_nvcc_host.cu
//
// The shared reduction headers compiled by nvcc (host side) and run through
// the same driver loop as host_reduce.cc: proves nvcc's front end takes the
// NT_HD code and that its host build gives g++'s bits. nvcc still emits its
// fatbin registration stubs, so the test links the static CUDA runtime. Called from nvcc_host_test.cc.
#include "shim/reduce/tile_reduce.h"
#include "test/shim/reduce/reduce_nvcc_host.h"

namespace numtrace::shim::testing {
namespace {

struct ArrayLoad {  // the kernel reads its tile partials through such a loader
  const Partial* p;
  NT_HD Partial operator()(uint64_t i) const { return p[i]; }
};

}  // namespace

BufferStats ReduceViaNvccHost(const void* data, uint64_t bytes, DType dtype) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint64_t tiles = TileCount(bytes, dtype);
  // Level 2 kept as a full array here (not streamed) and folded with
  // FoldTilePartials, as the kernel does.
  Partial* tile_partials = new Partial[tiles];
  Partial lanes[kLanes];
  for (uint64_t t = 0; t < tiles; ++t) {
    for (uint32_t l = 0; l < kLanes; ++l) lanes[l] = FoldLane(p, bytes, dtype, t, l);
    TreeCombine(lanes);
    tile_partials[t] = lanes[0];
  }
  for (uint32_t l = 0; l < kLanes; ++l) {
    lanes[l] = FoldTilePartials(ArrayLoad{tile_partials}, tiles, l);
  }
  TreeCombine(lanes);
  delete[] tile_partials;
  return Finalize(lanes[0], ElementCount(bytes, dtype), bytes, dtype);
}

}  // namespace numtrace::shim::testing
