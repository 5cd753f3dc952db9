// File: analyzer/report/json_summary.h
//
// The `--json` diff summary, exactly as docs/format.md section 2 defines
// it: what CI scripts and jq read. Besides the verdict and counts it
// carries each pair's `score` and `cause` where a pair is named, `origins`
// (where the differences are born), and `complete` with each side's
// `dropped` and `unmeasured` counts. For directory inputs
// the top level rolls the ranks up and `ranks` carries one summary per rank
// (same shape plus `rank`); the roll-up is read from those entries by the
// one RollUpRankEntries that `numtrace merge` also uses (summary_merge.h).
//
// Example:
//   std::string json = JsonSummary(report);
//   // {"format":"numtrace-diff-summary","version":1,"a":{...},...,"verdict":"diverged",...}
#ifndef NUMTRACE_ANALYZER_REPORT_JSON_SUMMARY_H_
#define NUMTRACE_ANALYZER_REPORT_JSON_SUMMARY_H_

#include <string>

#include "analyzer/report/rank_diff.h"

namespace numtrace::analyzer {

// One JSON object followed by a newline.
std::string JsonSummary(const DiffReport& report);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_JSON_SUMMARY_H_
