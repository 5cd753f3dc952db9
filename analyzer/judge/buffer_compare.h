// File: analyzer/judge/buffer_compare.h
//
// Compares one output buffer of run A with its counterpart in run B from
// their statistics alone (traces hold no elements). The tolerance rule, in
// docs/diffing.md too:
//
//   equal size and hash                      -> bitwise_equal
//   dtype, byte size or element count differ -> layout mismatch
//   NaN / +Inf / -Inf counts differ          -> nonfinite mismatch
//   integer, bool or raw buffer, bytes differ -> diverged
//   float: each statistic s in {l2, l1, sum, min, max} must satisfy
//       |s_a - s_b| <= atol_s + rtol_eff * scale_s
//     with scale = max(l2) for l2, max(l1) for l1 and sum, max |min|,|max|
//     over both runs for min and max; atol_s = atol * sqrt(n) for l2,
//     atol * n for l1 and sum, atol for min and max; and
//       rtol_eff = max(rtol, 4 * unit roundoff of the dtype)
//     (f64 2^-53, f32 2^-24, f16 2^-11, bf16 2^-8, f8e4m3 2^-4, f8e5m2 2^-3):
//     a one-ulp flip of the largest element is noise, not divergence.
//     Otherwise diverged.
// rel_diff is max over the statistics of |s_a - s_b| / scale_s.
//
// Example:
//   BufferVerdict v = CompareBuffers(buf_a, buf_b, Tolerance{1e-5, 0});
//   v.status == PairStatus::kWithinTolerance;  v.rel_diff == 3e-7
#ifndef NUMTRACE_ANALYZER_JUDGE_BUFFER_COMPARE_H_
#define NUMTRACE_ANALYZER_JUDGE_BUFFER_COMPARE_H_

#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct BufferVerdict {
  PairStatus status = PairStatus::kBitwiseEqual;
  double rel_diff = 0;
};

// rtol raised to what the dtype can resolve: max(rtol, 4 * unit roundoff).
double EffectiveRtol(DType dtype, double rtol);

BufferVerdict CompareBuffers(const Buffer& a, const Buffer& b, const Tolerance& tolerance);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_BUFFER_COMPARE_H_
