// File: common/format/digest.h
//
// Watch mode's digests (docs/format.md, `digest`), defined once for the shim
// that computes them and the analyzer that checks them against full captures:
//
// - A kernel's digest folds the 64-bit hashes of the buffers it touched,
//   measured after it ran, in the order of its kernel record's `buffers`
//   (the trace format's buffer hash, common/numeric/buffer_hash.h): a full capture of
//   the same launch gives KernelDigest(hashes of its record's buffers).
// - A step's hash folds its kernels' digests in launch order.
// - In `sampled` mode each buffer is hashed over the windows SampleWindows
//   names instead of whole (about 1/32 of its bytes), each window's hash
//   folded in window order.
//
// Folding is order-sensitive (a swap of two kernels changes the step hash)
// and includes the count, so a step with one kernel more never matches.
//
// Example:
//   uint64_t d = KernelDigest(std::span<const uint64_t>(buffer_hashes));
//   uint64_t s = StepHash(std::span<const uint64_t>(kernel_digests));
#ifndef NUMTRACE_COMMON_FORMAT_DIGEST_H_
#define NUMTRACE_COMMON_FORMAT_DIGEST_H_

#include <cstdint>
#include <span>

#include "common/numeric/buffer_hash.h"

namespace numtrace {

// Folds `hashes` in order: h = Mix(h ^ x_i) + i-dependent constant, then the count.
inline uint64_t FoldHashes(std::span<const uint64_t> hashes, uint64_t seed) {
  uint64_t h = Mix64(seed);
  for (uint64_t x : hashes) h = Mix64(h ^ x) + 0x9e3779b97f4a7c15ull;
  return Mix64(h ^ hashes.size());
}

inline constexpr uint64_t kKernelDigestSeed = 0x6b65726e656c6467ull;  // "kernel" digest
inline constexpr uint64_t kStepHashSeed = 0x7374657068617368ull;      // "stephash"
inline constexpr uint64_t kSampleSeed = 0x73616d706c656468ull;        // "sampled"

inline uint64_t KernelDigest(std::span<const uint64_t> buffer_hashes) {
  return FoldHashes(buffer_hashes, kKernelDigestSeed);
}
inline uint64_t StepHash(std::span<const uint64_t> kernel_digests) {
  return FoldHashes(kernel_digests, kStepHashSeed);
}
// A buffer's sampled hash: its windows' buffer hashes folded in order.
inline uint64_t SampledBufferHash(std::span<const uint64_t> window_hashes) {
  return FoldHashes(window_hashes, kSampleSeed);
}

// The documented sample of `sampled` mode: a buffer of at most
// kSampleWholeBytes is hashed whole; a larger one over kSampleWindows windows
// of `len` bytes each - the head, the tail, and kSampleWindows-2 evenly
// spaced between them - with len = bytes / (32 * kSampleWindows) rounded
// down to a multiple of 128 bytes (the cache-line size; a multiple of every
// element size), so at most 1/32 of the bytes are read. Window starts are
// multiples of 128 bytes from the buffer start (the tail's end is the
// buffer's end rounded down to 128 bytes, plus the last partial line).
inline constexpr uint64_t kSampleWholeBytes = 64 * 1024;
inline constexpr uint32_t kSampleWindows = 8;

struct SampleWindow {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// Fills `out[0..n)` and returns n (1 for a buffer hashed whole).
inline uint32_t SampleWindows(uint64_t bytes, SampleWindow out[kSampleWindows]) {
  if (bytes <= kSampleWholeBytes) {
    out[0] = {0, bytes};
    return 1;
  }
  uint64_t len = bytes / (32 * kSampleWindows) / 128 * 128;
  if (len < 128) len = 128;
  const uint64_t tail_start = (bytes - len) / 128 * 128;
  for (uint32_t i = 0; i < kSampleWindows; ++i) {
    const uint64_t start = tail_start * i / (kSampleWindows - 1) / 128 * 128;
    out[i] = {start, i + 1 == kSampleWindows ? bytes - start : len};
  }
  return kSampleWindows;
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_DIGEST_H_
