#include "analyzer/judge/buffer_compare.h"

#include <algorithm>
#include <cmath>

namespace numtrace::analyzer {
namespace {

double UnitRoundoff(DType t) {
  switch (t) {
    case DType::kF64: return std::ldexp(1.0, -53);
    case DType::kF32: return std::ldexp(1.0, -24);
    case DType::kF16: return std::ldexp(1.0, -11);
    case DType::kBF16: return std::ldexp(1.0, -8);
    case DType::kF8E4M3: return std::ldexp(1.0, -4);
    case DType::kF8E5M2: return std::ldexp(1.0, -3);
    default: return 0;
  }
}

struct StatDiff {
  double diff, scale, atol;
};

}  // namespace

double EffectiveRtol(DType dtype, double rtol) { return std::max(rtol, 4 * UnitRoundoff(dtype)); }

BufferVerdict CompareBuffers(const Buffer& a, const Buffer& b, const Tolerance& tolerance) {
  const BufferStats& x = a.stats;
  const BufferStats& y = b.stats;
  if (a.dtype != b.dtype || a.bytes != b.bytes || x.n != y.n) return {PairStatus::kLayoutMismatch, 0};
  if (x.hash == y.hash) return {PairStatus::kBitwiseEqual, 0};

  const double n = static_cast<double>(x.n);
  const double range_scale = std::max({std::fabs(x.min), std::fabs(x.max), std::fabs(y.min), std::fabs(y.max)});
  StatDiff stats[5] = {
      {std::fabs(x.l2 - y.l2), std::max(x.l2, y.l2), tolerance.atol * std::sqrt(n)},
      {std::fabs(x.l1 - y.l1), std::max(x.l1, y.l1), tolerance.atol * n},
      {std::fabs(x.sum - y.sum), std::max(x.l1, y.l1), tolerance.atol * n},
      {std::fabs(x.min - y.min), range_scale, tolerance.atol},
      {std::fabs(x.max - y.max), range_scale, tolerance.atol},
  };
  const int count = (x.has_range && y.has_range) ? 5 : 3;
  double rel = 0;
  for (int i = 0; i < count; ++i) {
    const StatDiff& s = stats[i];
    if (s.diff > 0) rel = std::max(rel, s.scale > 0 ? s.diff / s.scale : 1.0);
  }
  if (x.has_range != y.has_range) rel = std::max(rel, 1.0);  // one run has no finite element

  if (x.nan != y.nan || x.inf != y.inf || x.ninf != y.ninf) return {PairStatus::kNonfiniteMismatch, rel};
  if (!IsFloat(a.dtype)) {
    // Integers, bools and raw bytes have no rounding noise: any change counts.
    return {PairStatus::kDiverged, rel > 0 ? rel : 1.0};
  }
  if (x.has_range != y.has_range) return {PairStatus::kDiverged, rel};
  const double rtol = EffectiveRtol(a.dtype, tolerance.rtol);
  for (int i = 0; i < count; ++i) {
    const StatDiff& s = stats[i];
    if (s.diff > s.atol + rtol * s.scale) return {PairStatus::kDiverged, rel};
  }
  return {PairStatus::kWithinTolerance, rel};
}

}  // namespace numtrace::analyzer
