// File: analyzer/report/steps_report.h
//
// The step finder's result (analyzer/judge/step_finder.h) in every report:
// the summary's `steps` object (docs/format.md section 2), the terminal's
// "steps:" lines and the HTML page's per-step strip (the same object with
// `strip`: one state word per compared step). The capture commands come
// from each trace's header (dump_commands.h, BuildStepCapture): they
// capture the first differing step in full (or, when every step is equal,
// the first step holding a NaN/Inf).
//
// Example:
//   WriteStepsJson(rank_diff, /*strip=*/false, w);  // "steps":{...}, nothing without digests
//   out << StepsTerminal(rank_diff, color);
#ifndef NUMTRACE_ANALYZER_REPORT_STEPS_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_STEPS_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "analyzer/report/rank_diff.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {

// The step the commands capture: the first differing one, else the first with a NaN/Inf.
std::optional<int64_t> StepToCapture(const StepsResult& s);

// Writes the key "steps" and its object when the rank has a steps result.
void WriteStepsJson(const RankDiff& rd, bool strip, JsonWriter& w);

// "" without a steps result; else lines starting with two spaces.
std::string StepsTerminal(const RankDiff& rd, bool color);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_STEPS_REPORT_H_
