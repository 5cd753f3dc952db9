// File: analyzer/judge/buffer_compare.h
//
// Compares one output buffer of run A with its counterpart in run B from
// their statistics alone (traces hold no elements). The rule, in
// docs/diffing.md too:
//
//   byte sizes differ                         -> layout mismatch
//   equal size and hash                       -> bitwise_equal, whatever the
//                                                dtype labels say
//   dtypes (or element counts) disagree       -> compared as raw bytes: they
//                                                differ, so diverged
//   NaN / +Inf / -Inf counts differ           -> nonfinite mismatch
//   integer, bool or raw buffer, bytes differ -> diverged
//   float: score = max over s in {l2, l1, sum, min, max} of
//            |s_a - s_b| / (atol_s + RelativeThreshold(s) * scale_s)
//     (tolerance_model.h) with scale = max(l2) for l2, max(l1) for l1 and
//     sum, max |min|,|max| over both runs for min and max.
//     score <= 1 -> within_tolerance, else diverged.
// rel_diff is max over the statistics of |s_a - s_b| / scale_s. score is
// infinite when no threshold applies (sizes, NaN counts, exact dtypes).
//
// Example:
//   BufferVerdict v = CompareBuffers(buf_a, buf_b, Tolerance{1e-5, 0});
//   v.status == PairStatus::kWithinTolerance;  v.score == 0.3
#ifndef NUMTRACE_ANALYZER_JUDGE_BUFFER_COMPARE_H_
#define NUMTRACE_ANALYZER_JUDGE_BUFFER_COMPARE_H_

#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct BufferVerdict {
  PairStatus status = PairStatus::kBitwiseEqual;
  double rel_diff = 0;
  double score = 0;
};

BufferVerdict CompareBuffers(const Buffer& a, const Buffer& b, const Tolerance& tolerance);

// Folds one buffer's verdict into its pair's: the worse status wins (on equal
// status the larger score) and names the pair's buffers ia/ib; rel_diff and
// score are the maxima over the buffers.
void FoldBufferVerdict(PairVerdict* v, const BufferVerdict& bv, int32_t ia, int32_t ib);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_BUFFER_COMPARE_H_
