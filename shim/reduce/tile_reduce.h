// File: shim/reduce/tile_reduce.h
//
// The fixed shape of the reduction, shared by the host reference and the
// CUDA kernels so that both add the same numbers in the same order:
//
//   tile   = kLanes (256) lanes x kPerLane (16) elements = 4096 elements.
//   level 1: lane l of tile t folds elements t*4096 + l + j*256, j = 0..15
//            (those < n) in order of j, plus hash words t*512*es + l + k*256;
//            then the 256 lane partials meet in a pairwise tree: for stride
//            s = 128, 64, ..., 1: p[l] = Combine(p[l], p[l + s]) for l < s.
//   level 2: lane l folds tile partials l, l+256, l+512, ... in order, then
//            the same tree. Always run, even for a single tile.
//
// A buffer has TileCount(bytes, es) >= 1 tiles; a tile covers 4096*es bytes,
// a multiple of 8, so no hash word straddles two tiles, and the bytes past the
// last whole element (bytes % es) fall in the last tile's words.
//
// Example (host; the kernel does the same with one thread per lane):
//   Partial lanes[kLanes];
//   for (uint32_t l = 0; l < kLanes; ++l) lanes[l] = FoldLane(data, bytes, t, tile, l);
//   TreeCombine(lanes);  // lanes[0] is the tile's partial
#ifndef NUMTRACE_SHIM_REDUCE_TILE_REDUCE_H_
#define NUMTRACE_SHIM_REDUCE_TILE_REDUCE_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/numeric/element_decode.h"
#include "common/numeric/buffer_hash.h"
#include "common/numeric/hd.h"
#include "shim/reduce/partial.h"

namespace numtrace::shim {

inline constexpr uint32_t kLanes = 256;
inline constexpr uint32_t kPerLane = 16;
inline constexpr uint32_t kTileElements = kLanes * kPerLane;

// Elements of a buffer: bytes / es, bytes for raw.
NT_HD inline uint64_t ElementCount(uint64_t bytes, DType t) {
  return bytes / static_cast<uint64_t>(ElementSize(t));
}

NT_HD inline uint64_t TileCount(uint64_t bytes, DType t) {
  const uint64_t tile_bytes = uint64_t{kTileElements} * ElementSize(t);
  const uint64_t tiles = (bytes + tile_bytes - 1) / tile_bytes;
  return tiles == 0 ? 1 : tiles;
}

// Level 1 elements of one lane, with the dtype a constant so the decoder's
// dtype switch folds away (the hot loop of both host and device).
template <DType T>
NT_HD inline void FoldLaneElements(const uint8_t* data, uint64_t n, uint64_t first, Partial* p) {
  constexpr int es = ElementSize(T);
  for (uint32_t j = 0; j < kPerLane; ++j) {
    const uint64_t i = first + uint64_t{j} * kLanes;
    if (i >= n) break;
    FoldElement(p, DecodeElement(data + i * es, T));
  }
}

// Level 1, one lane of one tile.
NT_HD inline Partial FoldLane(const uint8_t* data, uint64_t bytes, DType t, uint64_t tile,
                              uint32_t lane) {
  Partial p = EmptyPartial();
  const int es = ElementSize(t);
  const uint64_t n = bytes / es;
  const uint64_t first = tile * kTileElements + lane;
  switch (t) {
#define NT_FOLD_CASE(T) case T: FoldLaneElements<T>(data, n, first, &p); break;
    NT_FOLD_CASE(DType::kF64) NT_FOLD_CASE(DType::kF32) NT_FOLD_CASE(DType::kF16)
    NT_FOLD_CASE(DType::kBF16) NT_FOLD_CASE(DType::kF8E4M3) NT_FOLD_CASE(DType::kF8E5M2)
    NT_FOLD_CASE(DType::kI64) NT_FOLD_CASE(DType::kI32) NT_FOLD_CASE(DType::kI16)
    NT_FOLD_CASE(DType::kI8) NT_FOLD_CASE(DType::kU8) NT_FOLD_CASE(DType::kBool)
#undef NT_FOLD_CASE
    default: break;  // raw: only the hash
  }
  const uint64_t words_per_tile = uint64_t{kTileElements} * es / 8;  // 512 * es
  const uint64_t word_end = (bytes + 7) / 8;
  const uint64_t first_word = tile * words_per_tile + lane;
  for (uint64_t k = 0; k < words_per_tile / kLanes; ++k) {
    const uint64_t w = first_word + k * kLanes;
    if (w >= word_end) break;
    p.hash_acc += HashWord(LoadHashWord(data, bytes, w), w);
  }
  return p;
}

// One step of the pairwise tree; the caller runs strides 128, 64, ..., 1
// (on the device with a barrier between strides).
NT_HD inline void TreeStep(Partial* lanes, uint32_t lane, uint32_t stride) {
  if (lane < stride) lanes[lane] = Combine(lanes[lane], lanes[lane + stride]);
}

// The whole tree on one thread; leaves the result in lanes[0]. Within one
// stride the lanes read and write disjoint slots, so running them one after
// another gives exactly what the parallel version gives.
NT_HD inline void TreeCombine(Partial* lanes) {
  for (uint32_t s = kLanes / 2; s >= 1; s /= 2) {
    for (uint32_t l = 0; l < s; ++l) TreeStep(lanes, l, s);
  }
}

// Level 2, one lane: folds tile partials lane, lane+256, ... of `count`.
// `load(i)` returns tile partial i (the device reads them past the L1 cache).
template <typename LoadFn>
NT_HD inline Partial FoldTilePartials(LoadFn load, uint64_t count, uint32_t lane) {
  Partial p = EmptyPartial();
  for (uint64_t i = lane; i < count; i += kLanes) p = Combine(p, load(i));
  return p;
}

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_REDUCE_TILE_REDUCE_H_
