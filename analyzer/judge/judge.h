// File: analyzer/judge/judge.h
//
// Turns an alignment into a verdict: compares the output buffers (role out or
// unknown) of every pair with buffer_compare.h's tolerance rule and fills
// every field of DiffResult (per pair status, counts, first divergence, first
// NaN/Inf of each run, the largest divergences).
//
// Which buffers are compared:
//  - exact and override pairs: output buffers paired by position (they are
//    in argument order); a different number of outputs is a layout mismatch.
//  - fuzzy and value pairs (another GEMM kernel, a fused kernel): each output
//    of A is paired with an unused output of B of the same byte size (one
//    with an equal hash first; dtype labels may disagree, CompareBuffers
//    settles that by the bytes); outputs without a counterpart are left out
//    (workspaces, the extra outputs of a fused kernel), and so are inputs,
//    buffer counts and names. No counterpart at all is a layout mismatch.
// Operator-level pairs inside a run of ops that computes what the other
// run computes in another number of ops (addmm against mm + add) take the
// verdict of the run's final output (same_math.h). Then origins.h sets each
// pair's cause and DiffResult::origins.
//
// Example:
//   DiffResult r = Judge(a, b, Align(a, b), JudgeOptions{.tolerance = {1e-5, 0}, .top_n = 10});
//   if (r.verdict == Verdict::kDiverged) r.alignment.pairs[*r.first_divergence];
#ifndef NUMTRACE_ANALYZER_JUDGE_JUDGE_H_
#define NUMTRACE_ANALYZER_JUDGE_JUDGE_H_

#include <cstddef>

#include "analyzer/align/alignment.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct JudgeOptions {
  Tolerance tolerance;  // defaults rtol 1e-5, atol 0 (the CLI's --rtol/--atol)
  size_t top_n = 10;    // length of DiffResult::top_divergences
};

DiffResult Judge(const Trace& a, const Trace& b, Alignment alignment, const JudgeOptions& options = {});

// Fills counts, first_divergence, top_divergences (the top_n largest
// score, earlier pair first on ties) and the verdict from r->alignment and
// r->verdicts: the roll-up Judge ends with, for callers (report tests) that
// set verdicts by hand. first_nonfinite_a/b are left as they are.
void TallyVerdicts(DiffResult* r, size_t top_n);

// The verdict on one pair (what Judge does per pair).
PairVerdict JudgePair(const Trace& a, uint32_t ka, const Trace& b, uint32_t kb, MatchMethod method,
                      const Tolerance& tolerance);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_JUDGE_H_
