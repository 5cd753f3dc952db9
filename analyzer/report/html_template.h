// File: analyzer/report/html_template.h
//
// The HTML report's page (markup, CSS and JS, no network) as one string,
// embedded at build time from html_template.html. HtmlReport fills its four
// markers, which occur once each and in this order: the header's verdict
// (and rank picker), the summary as markup, the JSON summary (the `--json`
// document, block id "numtrace-summary") and the row table (block id
// "numtrace-data").
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

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_
