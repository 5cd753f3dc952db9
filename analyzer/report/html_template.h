// File: analyzer/report/html_template.h
//
// The pages (markup, CSS and JS, no network) as strings, embedded at build
// time from html_template.html (the diff report) and
// cross_rank_template.html (the cross-rank page), each with the one style,
// html_style.css, and the scripts' helpers, html_page.js, put in at build
// time (analyzer/report/CMakeLists.txt). Their markers
// occur once each and in this order, filled by FillTemplate (html_page.h):
// - HtmlTemplate: the header's verdict (and rank picker), the summary as
//   markup, the JSON summary (the `--json` document, block id
//   "numtrace-summary") and the row table (block id "numtrace-data");
// - CrossRankTemplate: the header's verdict (and directory, rank picker)
//   and the cross-rank JSON document (block id "numtrace-summary").
//
// Example:
//   std::string_view page = HtmlTemplate();
//   size_t at = page.find(kHtmlSummaryMarker);  // where the summary goes
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_

#include <string_view>

namespace numtrace::analyzer {

inline constexpr std::string_view kHtmlHeadMarker = "__NUMTRACE_HEAD__";
inline constexpr std::string_view kHtmlSummaryMarker = "__NUMTRACE_SUMMARY__";
inline constexpr std::string_view kHtmlSummaryDataMarker = "__NUMTRACE_SUMMARY_DATA__";
inline constexpr std::string_view kHtmlRowsDataMarker = "__NUMTRACE_DATA__";
std::string_view HtmlTemplate();
std::string_view CrossRankTemplate();

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_
