// File: analyzer/judge/same_math.h
//
// Same math in another number of operators (docs/diffing.md, "Same math,
// other operators"): run B computes `mm` then `add` where A had one `addmm`.
// The aligner pairs A's addmm with B's mm by name and leaves B's add
// unpaired; judged one by one, addmm against mm is a false divergence (mm's
// output lacks the bias). Operator-level traces only (kernel-level pairs of
// other structure are the fuzzy/value pairs of judge.h).
//
// A group end is where the two data flows part: a pair Q of which some
// input, at the same position in both runs, was written by kernels X (A)
// and Y (B) that are not paired with each other. The groups are X and Y
// with the kernels they read from, back to pairs that do not diverge and
// kernels that read nothing (their outputs are the groups' inputs; at most
// kMaxGroupOps kernels each). When
//  - every pair with one kernel in a group has the other in the other group,
//  - both groups read the same inputs (the hashes of what they read from
//    outside, as sets), and
//  - what Q read at that position is not diverged (CompareValues),
// the groups compute the same: each diverged pair inside takes the verdict
// of that comparison (within tolerance at least: its own bytes differ).
//
// Example:
//   JudgeSameMathGroups(a, flow_a, b, flow_b, tolerance, &r);  // before TallyVerdicts
#ifndef NUMTRACE_ANALYZER_JUDGE_SAME_MATH_H_
#define NUMTRACE_ANALYZER_JUDGE_SAME_MATH_H_

#include <cstddef>

#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

inline constexpr size_t kMaxGroupOps = 16;

// Rewrites r->verdicts (parallel to r->alignment.pairs, set by JudgePair).
void JudgeSameMathGroups(const Trace& a, const DataFlow& flow_a, const Trace& b, const DataFlow& flow_b,
                         const Tolerance& tolerance, DiffResult* r);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_SAME_MATH_H_
