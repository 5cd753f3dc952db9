// File: test/shim/reduce/reference_reduce.h
//
// An independent, deliberately naive reference for the reduction tests:
// decodes with ldexp/fpclassify instead of bit building, walks the elements
// in plain index order, and hashes the words one after another. Sums agree
// with ReduceHost bit for bit only on values whose sums are exact (small
// dyadic numbers), which is how the tests use it; counts, min/max and the
// hash must agree on any input.
//
// Example:
//   RefElement e = RefDecode(bytes, DType::kF16);
//   BufferStats s = RefReduce(data, bytes, DType::kF16);
#ifndef NUMTRACE_TEST_SHIM_REDUCE_REFERENCE_REDUCE_H_
#define NUMTRACE_TEST_SHIM_REDUCE_REFERENCE_REDUCE_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/format/dtype.h"
#include "common/format/stats.h"

namespace numtrace::shim::testing {

enum class RefClass { kNormal, kZero, kSub, kNaN, kInf, kNInf };
struct RefElement {
  double value = 0;
  RefClass cls = RefClass::kNormal;
};

inline RefElement RefSmallFloat(uint32_t bits, int ebits, int mbits, int bias, bool ieee) {
  const int m = bits & ((1 << mbits) - 1);
  const int e = (bits >> mbits) & ((1 << ebits) - 1);
  const bool neg = (bits >> (ebits + mbits)) & 1;
  const int emax = (1 << ebits) - 1;
  if (ieee && e == emax) return {0, m ? RefClass::kNaN : (neg ? RefClass::kNInf : RefClass::kInf)};
  if (!ieee && e == emax && m == (1 << mbits) - 1) return {0, RefClass::kNaN};
  double v = e == 0 ? std::ldexp(m, 1 - bias - mbits) : std::ldexp((1 << mbits) + m, e - bias - mbits);
  if (neg) v = -v;
  if (e == 0) return {v, m == 0 ? RefClass::kZero : RefClass::kSub};
  return {v, RefClass::kNormal};
}

inline RefElement RefFromDouble(double v) {
  switch (std::fpclassify(v)) {
    case FP_NAN: return {0, RefClass::kNaN};
    case FP_INFINITE: return {0, v > 0 ? RefClass::kInf : RefClass::kNInf};
    case FP_ZERO: return {v, RefClass::kZero};
    case FP_SUBNORMAL: return {v, RefClass::kSub};
    default: return {v, RefClass::kNormal};
  }
}

inline RefElement RefDecode(const uint8_t* p, DType t) {
  uint64_t raw = 0;
  std::memcpy(&raw, p, DTypeSize(t));
  switch (t) {
    case DType::kF64: { double d; std::memcpy(&d, p, 8); return RefFromDouble(d); }
    case DType::kF32: {
      float f; std::memcpy(&f, p, 4);
      RefElement r = RefFromDouble(f);
      if (std::fpclassify(f) == FP_SUBNORMAL) r.cls = RefClass::kSub;  // normal as a double
      return r;
    }
    case DType::kF16: return RefSmallFloat(raw, 5, 10, 15, true);
    case DType::kBF16: return RefSmallFloat(raw, 8, 7, 127, true);
    case DType::kF8E4M3: return RefSmallFloat(raw, 4, 3, 7, false);
    case DType::kF8E5M2: return RefSmallFloat(raw, 5, 2, 15, true);
    default: break;
  }
  double v = 0;
  switch (t) {
    case DType::kI64: v = static_cast<double>(static_cast<int64_t>(raw)); break;
    case DType::kI32: v = static_cast<int32_t>(raw); break;
    case DType::kI16: v = static_cast<int16_t>(raw); break;
    case DType::kI8: v = static_cast<int8_t>(raw); break;
    case DType::kU8: v = static_cast<uint8_t>(raw); break;
    case DType::kBool: v = raw ? 1 : 0; break;
    default: break;
  }
  return {v, v == 0 ? RefClass::kZero : RefClass::kNormal};
}

inline uint64_t RefMix(uint64_t k) {  // MurmurHash3 fmix64, as the spec of hash.h says
  k = (k ^ (k >> 33)) * 0xff51afd7ed558ccdull;
  k = (k ^ (k >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}

inline uint64_t RefHash(const uint8_t* p, uint64_t bytes) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i * 8 < bytes; ++i) {
    uint8_t word[8] = {};
    std::memcpy(word, p + i * 8, bytes - i * 8 < 8 ? bytes - i * 8 : 8);
    uint64_t w;
    std::memcpy(&w, word, 8);
    acc += RefMix(w ^ RefMix(i + 0x6e756d7472616365ull));
  }
  return RefMix(acc ^ RefMix(bytes ^ 0x9e3779b97f4a7c15ull));
}

inline BufferStats RefReduce(const void* data, uint64_t bytes, DType t) {
  const auto* p = static_cast<const uint8_t*>(data);
  BufferStats s;
  s.hash = RefHash(p, bytes);
  s.n = bytes / DTypeSize(t);
  if (t == DType::kRaw) return s;
  double sumsq = 0;
  for (uint64_t i = 0; i < s.n; ++i) {
    const RefElement e = RefDecode(p + i * DTypeSize(t), t);
    if (e.cls == RefClass::kNaN) { ++s.nan; continue; }
    if (e.cls == RefClass::kInf) { ++s.inf; continue; }
    if (e.cls == RefClass::kNInf) { ++s.ninf; continue; }
    if (e.cls == RefClass::kZero) ++s.zero;
    if (e.cls == RefClass::kSub) ++s.sub;
    if (!s.has_range) {
      s.min = s.max = e.value;
      s.has_range = true;
    } else {
      if (e.value < s.min || (e.value == s.min && std::signbit(e.value))) s.min = e.value;
      if (e.value > s.max || (e.value == s.max && !std::signbit(e.value))) s.max = e.value;
    }
    s.sum += e.value;
    s.l1 += std::fabs(e.value);
    sumsq += e.value * e.value;
  }
  s.l2 = std::sqrt(sumsq);
  return s;
}

}  // namespace numtrace::shim::testing

#endif  // NUMTRACE_TEST_SHIM_REDUCE_REFERENCE_REDUCE_H_
