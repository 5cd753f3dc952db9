// File: analyzer/judge/step_finder.h
//
// The step finder (docs/diffing.md, "Which step first differs"): two traces
// captured in watch mode carry one `digest` record per step; steps are
// paired by number and compared launch by launch. A step whose kernel
// sequence differs in length or names is where the programs part
// (`structure`); one whose sequences agree but whose hashes differ holds a
// launch whose bytes differ (`digest`). Also finds each side's first step
// with a NaN/Inf and says, in one line each, what limits the comparison
// (no digests on a side, step numbers that do not line up, a side cut
// short, launches not digested, kernel counts that never match).
//
// Digests are exact (equal digests: equal bytes), so any differing step
// makes the verdict `diverged`; a full capture of that step (the summary's
// printed command) says whether it is within tolerance.
//
// Example:
//   std::optional<StepsResult> s = FindSteps(trace_a, trace_b);  // nullopt: neither has digests
//   if (s && s->first_differing) ...  // s->first_index, s->a_digest / s->b_digest
#ifndef NUMTRACE_ANALYZER_JUDGE_STEP_FINDER_H_
#define NUMTRACE_ANALYZER_JUDGE_STEP_FINDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/judge/steps_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// nullopt when neither trace holds digests.
std::optional<StepsResult> FindSteps(const Trace& a, const Trace& b);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_STEP_FINDER_H_
