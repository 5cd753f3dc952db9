// File: shim/reduce/partial.h
//
// The partial result of reducing part of a buffer, how one element is folded
// into it, how two partials combine (in a fixed order: a then b), and how the
// final partial becomes the BufferStats of trace format v1. Shared verbatim by
// the host reference and the CUDA kernels; all fields are 8 bytes wide so the
// kernels can copy a Partial through global memory word by word.
//
// Example:
//   Partial p = EmptyPartial();
//   FoldElement(&p, DecodeElement(bytes, DType::kF32));
//   Partial q = Combine(p, other);            // p's elements come first
//   BufferStats s = Finalize(q, n, total_bytes, DType::kF32);
#ifndef NUMTRACE_SHIM_REDUCE_PARTIAL_H_
#define NUMTRACE_SHIM_REDUCE_PARTIAL_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/format/stats.h"
#include "common/numeric/element_decode.h"
#include "common/numeric/buffer_hash.h"
#include "common/numeric/hd.h"

namespace numtrace::shim {

struct Partial {
  uint64_t nan, inf, ninf, zero, sub, finite;
  double min, max;          // +Inf / -Inf while finite == 0
  double sum, l1, sumsq;
  uint64_t hash_acc;        // sum mod 2^64 of HashWord terms
};
inline constexpr int kPartialWords = 12;
static_assert(sizeof(Partial) == kPartialWords * 8, "Partial must be 12 plain 8-byte words");

NT_HD inline Partial EmptyPartial() {
  Partial p;
  p.nan = p.inf = p.ninf = p.zero = p.sub = p.finite = 0;
  p.min = NtBitsToDouble(0x7ff0000000000000ull);  // +Inf
  p.max = NtBitsToDouble(0xfff0000000000000ull);  // -Inf
  p.sum = p.l1 = p.sumsq = 0.0;
  p.hash_acc = 0;
  return p;
}

// min/max that do not depend on argument order, even for -0.0 vs +0.0
// (which compare equal): min prefers -0.0, max prefers +0.0.
NT_HD inline double MinOf(double a, double b) {
  if (a < b) return a;
  if (b < a) return b;
  return (NtDoubleToBits(b) >> 63) ? b : a;
}
NT_HD inline double MaxOf(double a, double b) {
  if (a > b) return a;
  if (b > a) return b;
  return (NtDoubleToBits(b) >> 63) ? a : b;
}

NT_HD inline double AbsOf(double v) {
  return NtBitsToDouble(NtDoubleToBits(v) & 0x7fffffffffffffffull);
}

NT_HD inline void FoldElement(Partial* p, const Element& e) {
  switch (e.cls) {
    case ElementClass::kNaN: ++p->nan; return;
    case ElementClass::kPosInf: ++p->inf; return;
    case ElementClass::kNegInf: ++p->ninf; return;
    case ElementClass::kZero: ++p->zero; break;
    case ElementClass::kSubnormal: ++p->sub; break;
    case ElementClass::kNormal: break;
  }
  ++p->finite;
  p->min = MinOf(p->min, e.value);
  p->max = MaxOf(p->max, e.value);
  p->sum = NtAdd(p->sum, e.value);
  p->l1 = NtAdd(p->l1, AbsOf(e.value));
  p->sumsq = NtAdd(p->sumsq, NtMul(e.value, e.value));
}

NT_HD inline Partial Combine(const Partial& a, const Partial& b) {
  Partial r;
  r.nan = a.nan + b.nan;
  r.inf = a.inf + b.inf;
  r.ninf = a.ninf + b.ninf;
  r.zero = a.zero + b.zero;
  r.sub = a.sub + b.sub;
  r.finite = a.finite + b.finite;
  r.min = MinOf(a.min, b.min);
  r.max = MaxOf(a.max, b.max);
  r.sum = NtAdd(a.sum, b.sum);
  r.l1 = NtAdd(a.l1, b.l1);
  r.sumsq = NtAdd(a.sumsq, b.sumsq);
  r.hash_acc = a.hash_acc + b.hash_acc;
  return r;
}

// `n` elements under `t` (bytes for raw), `bytes` the buffer size.
NT_HD inline BufferStats Finalize(const Partial& p, uint64_t n, uint64_t bytes, DType t) {
  BufferStats s;
  s.n = n;
  s.hash = FinalizeHash(p.hash_acc, bytes);
  if (t == DType::kRaw) return s;
  s.nan = p.nan;
  s.inf = p.inf;
  s.ninf = p.ninf;
  s.zero = p.zero;
  s.sub = p.sub;
  s.has_range = p.finite > 0;
  s.min = s.has_range ? p.min : 0.0;
  s.max = s.has_range ? p.max : 0.0;
  s.sum = p.sum;
  s.l1 = p.l1;
  s.l2 = NtSqrt(p.sumsq);
  return s;
}

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_REDUCE_PARTIAL_H_
