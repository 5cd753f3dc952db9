// File: analyzer/report/html_report.h
//
// One self-contained HTML file (inline CSS/JS, no network) for a diff: the
// verdict, a "first divergence" card, an origins panel (where differences
// are born, each with the pairs it reaches), a log-scale plot of each pair's
// score along the launch sequence (score 1 = the tolerance line) and a
// filterable, virtualised table of every pair with its status and cause. Built to stay usable at 1M kernels: the data is embedded as compact
// columns (names interned, numbers with 2 significant digits, enums as small
// ints) and the page renders only the rows in view. The page takes the
// names of statuses, causes and match methods from the data, which writes
// them from judge/'s and align/'s enum lists: no index is hard-coded twice.
//
// Every trace string is data, never markup: it travels in a JSON block with
// '<', '>', '&' and U+2028/2029 escaped, and the page builds DOM nodes with
// textContent.
//
// Example:
//   std::string html = HtmlReport(report, {});
//   // write html to report.html, open it in any browser
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "analyzer/report/rank_diff.h"

namespace numtrace::analyzer {

struct HtmlOptions {
  int context = 5;  // pairs shown before the first divergence
  int top = 10;     // largest divergences listed
};

std::string HtmlReport(const DiffReport& report, const HtmlOptions& options);

// Appends `s` as a JSON string safe inside an HTML <script> element: on top
// of JSON escaping, '<', '>', '&', U+2028 and U+2029 become \uXXXX.
void AppendScriptSafeJsonString(std::string_view s, std::string* out);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_REPORT_H_
