// File: common/numeric/buffer_hash.h
//
// The 64-bit buffer hash of trace format v1: over the raw bytes, independent
// of dtype, and computable in any partition. The buffer is read as 8-byte
// little-endian words w_i (the last one zero-padded); each word contributes
// Mix64(w_i ^ Mix64(i + kHashSeed)) and the contributions are summed mod 2^64.
// Integer addition is associative and commutative, so tiles, lanes and blocks
// may add them in any order and still get the same bits. The index term makes
// the hash position-sensitive (swapping two words changes it); the byte count
// in the final mix separates buffers that differ only in trailing zero bytes.
//
// Example:
//   uint64_t acc = 0;
//   for (uint64_t i = 0; i < words; ++i) acc += HashWord(word[i], i);
//   uint64_t h = FinalizeHash(acc, bytes);
#ifndef NUMTRACE_COMMON_NUMERIC_BUFFER_HASH_H_
#define NUMTRACE_COMMON_NUMERIC_BUFFER_HASH_H_

#include <cstdint>

#include "common/numeric/hd.h"

namespace numtrace {

inline constexpr uint64_t kHashSeed = 0x6e756d7472616365ull;  // "numtrace"

// MurmurHash3's fmix64 finaliser: a bijection with full avalanche.
NT_HD inline uint64_t Mix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

NT_HD inline uint64_t HashWord(uint64_t word, uint64_t index) {
  return Mix64(word ^ Mix64(index + kHashSeed));
}

// Word `index` of a buffer of `bytes` bytes; the bytes past the end read as 0.
NT_HD inline uint64_t LoadHashWord(const uint8_t* data, uint64_t bytes, uint64_t index) {
  const uint64_t start = index * 8;
  if (start + 8 <= bytes) return NtLoadLE(data + start, 8);
  uint64_t w = 0;
  for (uint64_t b = start; b < bytes; ++b) w |= static_cast<uint64_t>(data[b]) << (8 * (b - start));
  return w;
}

NT_HD inline uint64_t FinalizeHash(uint64_t acc, uint64_t bytes) {
  return Mix64(acc ^ Mix64(bytes ^ 0x9e3779b97f4a7c15ull));
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_NUMERIC_BUFFER_HASH_H_
