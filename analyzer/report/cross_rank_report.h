// File: analyzer/report/cross_rank_report.h
//
// The cross-rank check's three outputs: a terminal table (one row per rank,
// then the replica mismatches and the first NaN/Inf), the JSON document
// `numtrace-cross-rank` (docs/format.md section 7, cross-rank summary), and a
// self-contained HTML page with a rank selector. ranks/ computes, report/
// renders: the JSON through JsonWriter, names on the terminal through
// TerminalSafe. The page is the diff report's machinery: its template
// (cross_rank_template.html, the diff report's style), header (html_page.h)
// and data block - the JSON document itself, script-safe - from which the
// page's script draws every row.
//
// Watch traces give an `odd_rank_out` list instead (OddRank*).
//
// Example:
//   std::cout << CrossRankTerminal(result, "run", /*top=*/10);
//   WriteOutput("ranks.json", CrossRankJson(result, "run"), force, std::cout);
#ifndef NUMTRACE_ANALYZER_REPORT_CROSS_RANK_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_CROSS_RANK_REPORT_H_

#include <string>

#include "analyzer/ranks/cross_rank.h"
#include "analyzer/ranks/odd_rank.h"

namespace numtrace::analyzer {

// "consistent" or "replicas_differ" (common/format/summary_words.h).
std::string CrossRankVerdict(const CrossRankResult& r);

std::string CrossRankTerminal(const CrossRankResult& r, const std::string& dir, int top);
std::string CrossRankJson(const CrossRankResult& r, const std::string& dir);
std::string CrossRankHtml(const CrossRankResult& r, const std::string& dir);

// The same three for watch traces (digests compared across ranks): the odd
// rank out. The HTML draws a rank x step strip in which the cells of a rank
// that departed from the majority at that step stand out.
std::string OddRankVerdict(const OddRankResult& r);
std::string OddRankTerminal(const OddRankResult& r, const std::string& dir, int top);
std::string OddRankJson(const OddRankResult& r, const std::string& dir);
std::string OddRankHtml(const OddRankResult& r, const std::string& dir);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_CROSS_RANK_REPORT_H_
