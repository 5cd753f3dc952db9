// File: analyzer/report/html_report.h
//
// One self-contained HTML file (inline CSS/JS, no network) for a diff. The
// summary - verdict, counts, warnings, environment, the first divergence
// card, roots, origins, modules, first NaN/Inf, largest divergences - is
// markup, readable without JavaScript, rendered from the diff result like
// the terminal summary. Below it a log-scale plot of each pair's score
// (score 1 = the tolerance line) and a virtualised, filterable, sortable
// table of every row (pairs and unmatched kernels) that the page's script
// builds from the embedded data:
// - "numtrace-summary": the `--json` summary, byte for byte JsonSummary's
//   document (docs/format.md section 2);
// - "numtrace-data": the row table, compact whatever the number of rows:
//   names interned, per row a few LEB128 varints (seq steps, name ids, one
//   kind code for status, method and cause, scores as 16-bit ordered codes
//   of two significant digits, module ids), column after column, deflated
//   and base64 (the page inflates it with the browser's DecompressionStream);
//   per origin the rows it reaches as a deflated bitset.
// The page takes the names of statuses, causes and methods from the data,
// which writes them from judge/'s and align/'s enum lists. Every trace string
// is data, never markup: HtmlEscape in markup, AppendScriptSafe in data
// blocks (html_escape.h); the page builds DOM nodes with textContent.
//
// Example:
//   std::string html = HtmlReport(report, {});
//   // write html to report.html, open it in any browser
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "analyzer/report/html_escape.h"  // AppendScriptSafeJsonString, for callers
#include "analyzer/report/rank_diff.h"

namespace numtrace::analyzer {

struct HtmlOptions {
  int context = 5;  // pairs shown before the first divergence
  int top = 10;     // largest divergences listed
};

std::string HtmlReport(const DiffReport& report, const HtmlOptions& options);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_REPORT_H_
