// File: analyzer/report/environment_report.h
//
// How every report says what else differed between the runs
// (judge/environment_diff.h): the summary's `environment` section
// (docs/format.md section 2), the words the verdict line adds when the runs
// diverged and a known-relevant setting differs. The rank whose environment
// a rolled-up report shows is RollUp's (rank_diff.h, `environment_rank`). Renderers (terminal, HTML) escape
// the trace's text themselves.
//
// Example:
//   WriteEnvironmentJson(*result.environment, w);  // "environment":{...}
//   VerdictEnvironmentKeys(*result.environment);   // "torch.matmul.allow_tf32, env.NCCL_ALGO"
#ifndef NUMTRACE_ANALYZER_REPORT_ENVIRONMENT_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_ENVIRONMENT_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/judge/environment_diff.h"
#include "analyzer/report/rank_diff.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {

// Writes the key "environment" and its object (differs, only_a, only_b, same).
void WriteEnvironmentJson(const EnvironmentDiff& d, JsonWriter& w);

// The relevant differing keys, comma-separated, at most `max` then
// "and N more" - with the relevant env.* variables set on one side only;
// empty when no relevant key differs.
std::string VerdictEnvironmentKeys(const EnvironmentDiff& d, size_t max = 4);

// The effect line of a difference ("" for a key the table does not know).
std::string_view EffectOf(const EnvDifference& e);

// The relevant differences that can change the first divergence's kernel
// (A's name, demangled name and operator): a GEMM under TF32, an atomics
// kernel under non-deterministic algorithms. Empty without either.
std::vector<const EnvDifference*> AffectingFirstDivergence(const RankDiff& rd);

// A side of some rank whose format records no environment (a DebugMode
// log), else nullptr; and the report's line for it: "not compared: a
// DebugMode log records no environment".
const Trace* SideWithoutEnvironment(const DiffReport& report);
std::string NoEnvironmentNote(const Trace& t);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_ENVIRONMENT_REPORT_H_
