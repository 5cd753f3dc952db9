#include "analyzer/judge/buffer_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analyzer/judge/tolerance_model.h"

namespace numtrace::analyzer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct StatDiff {
  Statistic stat;
  double diff, scale, atol;
};

}  // namespace

BufferVerdict CompareBuffers(const Buffer& a, const Buffer& b, const Tolerance& tolerance) {
  const BufferStats& x = a.stats;
  const BufferStats& y = b.stats;
  if (a.bytes != b.bytes) return {PairStatus::kLayoutMismatch, 0, kInf};
  // The hash covers the raw bytes: equal bytes are equal values under any label.
  if (x.hash == y.hash) return {PairStatus::kBitwiseEqual, 0, 0};
  // Labels disagree (`raw` against `f32`, two inferences): the statistics
  // mean different things, so only the bytes can be compared - and they differ.
  if (a.dtype != b.dtype || x.n != y.n) return {PairStatus::kDiverged, 1.0, kInf};

  const double n = static_cast<double>(x.n);
  const double range_scale = std::max({std::fabs(x.min), std::fabs(x.max), std::fabs(y.min), std::fabs(y.max)});
  const StatDiff stats[kStatisticCount] = {
      {Statistic::kL2, std::fabs(x.l2 - y.l2), std::max(x.l2, y.l2), tolerance.atol * std::sqrt(n)},
      {Statistic::kL1, std::fabs(x.l1 - y.l1), std::max(x.l1, y.l1), tolerance.atol * n},
      {Statistic::kSum, std::fabs(x.sum - y.sum), std::max(x.l1, y.l1), tolerance.atol * n},
      {Statistic::kMin, std::fabs(x.min - y.min), range_scale, tolerance.atol},
      {Statistic::kMax, std::fabs(x.max - y.max), range_scale, tolerance.atol},
  };
  const int count = (x.has_range && y.has_range) ? kStatisticCount : 3;
  double rel = 0, score = 0;
  for (int i = 0; i < count; ++i) {
    const StatDiff& s = stats[i];
    if (s.diff <= 0) continue;
    rel = std::max(rel, s.scale > 0 ? s.diff / s.scale : 1.0);
    const double threshold = s.atol + RelativeThreshold(s.stat, a.dtype, x.n, tolerance.rtol) * s.scale;
    score = std::max(score, threshold > 0 ? s.diff / threshold : kInf);
  }
  if (x.has_range != y.has_range) {  // one run has no finite element
    rel = std::max(rel, 1.0);
    score = kInf;
  }

  if (x.nan != y.nan || x.inf != y.inf || x.ninf != y.ninf) return {PairStatus::kNonfiniteMismatch, rel, kInf};
  if (!IsFloat(a.dtype)) {
    // Integers, bools and raw bytes have no rounding noise: any change counts.
    return {PairStatus::kDiverged, rel > 0 ? rel : 1.0, kInf};
  }
  if (score > 1) return {PairStatus::kDiverged, rel, score};
  return {PairStatus::kWithinTolerance, rel, score};
}

void FoldBufferVerdict(PairVerdict* v, const BufferVerdict& bv, int32_t ia, int32_t ib) {
  if (v->a_buffer < 0 || bv.status > v->status || (bv.status == v->status && bv.score > v->score)) {
    v->status = bv.status;
    v->a_buffer = ia;
    v->b_buffer = ib;
  }
  v->rel_diff = std::max(v->rel_diff, bv.rel_diff);
  v->score = std::max(v->score, bv.score);
}

}  // namespace numtrace::analyzer
