// File: analyzer/judge/roots.h
//
// Where the divergences beyond tolerance are born (docs/diffing.md,
// "Roots"): the answer that stays useful when runs are not bitwise equal up
// to the bug (bf16, eager vs compiled), where origins.h lists only noise and
// the kernel of the real change is `inherited` (its inputs differ in their
// bits). Runs after origins.h, on the judge's result:
//
//  1. cause born: a diverged pair whose cause is inherited, none of whose
//     inputs is beyond tolerance - no kernel of A it read from (data_flow.h)
//     is a diverged pair, no root's divergence reaches it (through pairs
//     within tolerance too: masked_fill's statistics hide what it passes
//     on), and its input buffers compared directly (role `in` buffers with
//     statistics; a log's printed input norms) are within tolerance.
//     `inherited` then means: some input was beyond tolerance, or carries
//     a root's divergence.
//     At operator level an input written by an op only one run ran does
//     not count (the first pair reading it stands for that op), also when
//     its size differs (cause unknown: a bf16 cast), and a view op (its
//     outputs share its inputs' storage) is never born: it passes on what
//     it views.
//  2. roots: every diverged pair whose cause is origin or born (at operator
//     level not a backward op whose shape alone differs after a forward
//     root of layout: autograd gave it that shape); per root the
//     later diverged pairs its divergence flows to along A's data flow
//     (through pairs that are not bitwise equal; at most kMaxOriginsPerPair
//     roots kept per pair, the earliest, so counts are lower bounds), the
//     first root in A and the roots ranked by score.
//
// Example:
//   DiffResult r = Judge(a, b, Align(a, b));  // Judge calls AnalyzeRoots
//   r.roots.first;                             // pair index, e.g. the planted kernel
//   r.roots.descendants[*r.roots.first];       // 41
#ifndef NUMTRACE_ANALYZER_JUDGE_ROOTS_H_
#define NUMTRACE_ANALYZER_JUDGE_ROOTS_H_

#include <cstddef>

#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// Sets cause born where it applies and fills r->roots (AnalyzeOrigins first).
void AnalyzeRoots(const Trace& a, const Trace& b, size_t top_n, const Tolerance& tolerance, DiffResult* r);
// The same with both runs' data flow built once by the caller.
void AnalyzeRoots(const Trace& a, const DataFlow& flow_a, const Trace& b, const DataFlow& flow_b, size_t top_n,
                  const Tolerance& tolerance, DiffResult* r);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_ROOTS_H_
