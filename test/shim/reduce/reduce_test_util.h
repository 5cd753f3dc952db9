// File: test/shim/reduce/reduce_test_util.h
//
// Buffers for the reduction tests (host here, GPU in test/gpu/reduce):
// "friendly" buffers whose finite values are small dyadic numbers (every sum
// and sum of squares is exact, so any summation order gives the same bits)
// sprinkled with NaN payloads, infinities, signed zeros and subnormals; and a
// field-by-field bit comparison of BufferStats.
//
// Example:
//   auto buf = MakeBuffer(DType::kBF16, /*n=*/4097, /*seed=*/1, kSpecials);
//   EXPECT_TRUE(SameBits(ReduceHost(buf.data(), buf.size(), DType::kBF16), ref));
#ifndef NUMTRACE_TEST_SHIM_REDUCE_REDUCE_TEST_UTIL_H_
#define NUMTRACE_TEST_SHIM_REDUCE_REDUCE_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/format/dtype.h"
#include "common/format/stats.h"
#include "test/shim/reduce/reference_reduce.h"

namespace numtrace::shim::testing {

enum BufferFlags : unsigned { kPlain = 0, kSpecials = 1, kSubnormals = 2, kRandomBits = 4 };

inline std::vector<uint64_t> FloatPatterns(DType t, bool want_sub) {
  // Every finite pattern of an 8/16-bit float that is a multiple of 2^-6
  // below 16 (or, with want_sub, every subnormal).
  std::vector<uint64_t> out;
  const int bits = DTypeSize(t) * 8;
  for (uint64_t b = 0; b < (uint64_t{1} << bits); ++b) {
    uint8_t bytes[8] = {static_cast<uint8_t>(b), static_cast<uint8_t>(b >> 8)};
    const RefElement e = RefDecode(bytes, t);
    if (want_sub ? e.cls == RefClass::kSub
                 : (e.cls == RefClass::kNormal && std::fabs(e.value) < 16 &&
                    std::ldexp(e.value, 6) == std::floor(std::ldexp(e.value, 6)))) {
      out.push_back(b);
    }
  }
  return out;
}

inline std::vector<uint64_t> SpecialPatterns(DType t) {
  switch (t) {
    case DType::kF64: return {0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001,
                              0x7ff0000000000000, 0xfff0000000000000, 0, 0x8000000000000000};
    case DType::kF32: return {0x7fc00000, 0xffc00001, 0x7f800001, 0x7f800000, 0xff800000, 0,
                              0x80000000};
    case DType::kF16: return {0x7e00, 0xfe01, 0x7c01, 0x7c00, 0xfc00, 0, 0x8000};
    case DType::kBF16: return {0x7fc0, 0xff81, 0x7f81, 0x7f80, 0xff80, 0, 0x8000};
    case DType::kF8E4M3: return {0x7f, 0xff, 0, 0x80};  // no infinities
    case DType::kF8E5M2: return {0x7d, 0xfe, 0x7f, 0x7c, 0xfc, 0, 0x80};
    default: return {0};
  }
}

inline void PutElement(std::vector<uint8_t>* buf, uint64_t i, DType t, uint64_t bits) {
  std::memcpy(buf->data() + i * DTypeSize(t), &bits, DTypeSize(t));
}

// n elements of t plus `tail` extra bytes (bytes that are not a whole element).
inline std::vector<uint8_t> MakeBuffer(DType t, uint64_t n, uint32_t seed, unsigned flags,
                                       uint64_t tail = 0) {
  std::mt19937_64 rng(seed);
  const int es = DTypeSize(t);
  std::vector<uint8_t> buf(n * es + tail);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  if ((flags & kRandomBits) || t == DType::kRaw) return buf;
  const bool small_float = IsFloat(t) && es <= 2;
  static thread_local std::vector<uint64_t> friendly[kDTypeCount], subs[kDTypeCount];
  const int ti = static_cast<int>(t);
  if (small_float && friendly[ti].empty()) {
    friendly[ti] = FloatPatterns(t, false);
    subs[ti] = FloatPatterns(t, true);
  }
  const std::vector<uint64_t> specials = SpecialPatterns(t);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    const int pick = static_cast<int>(r % 100);
    uint64_t bits;
    if ((flags & kSpecials) && pick < 10) {
      bits = specials[(r >> 8) % specials.size()];
    } else if ((flags & kSubnormals) && IsFloat(t) && pick < 20) {
      // Subnormal sums stay exact when no normal value shares the buffer.
      if (small_float) bits = subs[ti][(r >> 8) % subs[ti].size()];
      else if (t == DType::kF32) bits = ((r >> 8) & 0x3ff) | ((r >> 20 & 1) << 31);
      else bits = ((r >> 8) & 0x3ff) | ((r >> 20 & 1) << 63);
      if ((bits & 0x7fff'ffff'ffffull) == 0) bits |= 1;
    } else if (flags & kSubnormals) {
      bits = (r >> 9 & 1) ? 0 : specials.back();  // +0 / -0 only
      if (!IsFloat(t)) bits = 0;
    } else if (small_float) {
      bits = friendly[ti][(r >> 8) % friendly[ti].size()];
    } else if (t == DType::kF64) {
      const double v = static_cast<double>(static_cast<int64_t>((r >> 8) % 2047) - 1023) / 64;
      std::memcpy(&bits, &v, 8);
    } else if (t == DType::kF32) {
      const float v = static_cast<float>(static_cast<int64_t>((r >> 8) % 2047) - 1023) / 64;
      uint32_t b32;
      std::memcpy(&b32, &v, 4);
      bits = b32;
    } else if (t == DType::kI64 || t == DType::kI32 || t == DType::kI16) {
      bits = static_cast<uint64_t>(static_cast<int64_t>((r >> 8) % 2001) - 1000);
    } else {
      bits = r >> 8;  // i8, u8, bool: every byte is exact
    }
    PutElement(&buf, i, t, bits);
  }
  return buf;
}

inline uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

// Empty when equal bit for bit, else the first differing field.
inline std::string StatsDiff(const BufferStats& a, const BufferStats& b) {
#define NT_CMP(f) if (a.f != b.f) return #f ": " + std::to_string(a.f) + " vs " + std::to_string(b.f);
#define NT_CMPD(f) if (Bits(a.f) != Bits(b.f)) return #f ": bits differ";
  NT_CMP(n) NT_CMP(nan) NT_CMP(inf) NT_CMP(ninf) NT_CMP(zero) NT_CMP(sub) NT_CMP(has_range)
  NT_CMPD(min) NT_CMPD(max) NT_CMPD(sum) NT_CMPD(l1) NT_CMPD(l2) NT_CMP(hash)
#undef NT_CMP
#undef NT_CMPD
  return "";
}

}  // namespace numtrace::shim::testing

#endif  // NUMTRACE_TEST_SHIM_REDUCE_REDUCE_TEST_UTIL_H_
