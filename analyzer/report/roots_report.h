// File: analyzer/report/roots_report.h
//
// The roots (judge/roots.h) in every view: the summary's `roots` object
// (docs/format.md, spec section 2) and the sentence the terminal and the
// HTML report lead with:
//
//   the divergence beyond tolerance starts at NAME (cause born: inputs within
//   tolerance or from ops only one run ran, output score 1.6); 41 of the 44
//   diverged pairs descend from it
//
// A directory's roll-up over ranks (RollUp, rank_diff.h) ranks roots by
// score across ranks and takes the first in launch order, as `origins`.
//
// Example:
//   WriteRoots(rank_diff, json_writer);              // "roots":{...}
//   RootsSentence(rank_diff);                        // "" when no root
#ifndef NUMTRACE_ANALYZER_REPORT_ROOTS_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_ROOTS_REPORT_H_

#include <string>

#include "analyzer/report/rank_diff.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {

// The summary's `roots` of one rank.
void WriteRoots(const RankDiff& rd, JsonWriter& w);

// The lead sentence for the first root by launch order (plain text, not
// escaped); "" when the rank has no root.
std::string RootsSentence(const RankDiff& rd);

// What a cause means, in the words of the lead sentence.
std::string_view CauseMeaning(Cause c);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_ROOTS_REPORT_H_
