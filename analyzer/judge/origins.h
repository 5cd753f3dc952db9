// File: analyzer/judge/origins.h
//
// Where the runs' differences are born (docs/diffing.md, "Origins"). Runs
// after the per-pair verdicts, on the judge's result:
//
//  1. cause of every pair whose outputs are not bitwise equal:
//       origin     every input the kernel read (data_flow.h: role `in`
//                  buffers, and what buffers it overwrote held before) is
//                  bitwise equal to its partner's, position by position;
//       inherited  some input differs;
//       unknown    the inputs cannot be compared: different buffer counts or
//                  sizes (fused pairs), or a buffer whose contents before the
//                  launch were not measured (role `unknown`, outputs=all).
//  2. attribution along run A's data flow (data_flow.h): a difference flows
//     from an origin to every later kernel that reads, directly or through
//     kernels whose outputs also differ, what it wrote. Each pair keeps the
//     origins it flows from (at most kMaxOriginsPerPair, the earliest ones;
//     counts are then lower bounds).
//  3. per origin the number of later diverged pairs it reaches (descendants),
//     the first origin in A, and the origins ranked by score.
//
// Example:
//   DiffResult r = Judge(a, b, Align(a, b));  // Judge calls AnalyzeOrigins
//   r.verdicts[*r.first_divergence].cause;    // Cause::kInherited
//   r.origins.descendants[*r.origins.first];  // 288
#ifndef NUMTRACE_ANALYZER_JUDGE_ORIGINS_H_
#define NUMTRACE_ANALYZER_JUDGE_ORIGINS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

inline constexpr size_t kMaxOriginsPerPair = 16;

// The cause of one pair from its kernels' inputs (step 1), as each run's
// DataFlow sees them.
Cause PairCause(const Trace& a, const DataFlow& flow_a, uint32_t ka, const Trace& b, const DataFlow& flow_b,
                uint32_t kb);

// Sets r->verdicts[i].cause and r->origins from r->alignment, the
// verdicts' status and score and r->first_divergence (TallyVerdicts first). `top_n` bounds r->origins.top.
void AnalyzeOrigins(const Trace& a, const Trace& b, size_t top_n, DiffResult* r);
// The same with both runs' data flow built once by the caller (Judge shares
// A's with roots.h).
void AnalyzeOrigins(const Trace& a, const DataFlow& flow_a, const Trace& b, const DataFlow& flow_b, size_t top_n,
                    DiffResult* r);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_ORIGINS_H_
