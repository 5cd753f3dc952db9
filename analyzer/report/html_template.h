// File: analyzer/report/html_template.h
//
// The HTML report's page (markup, CSS and JS, no network) as one string,
// embedded at build time from html_template.html. The page reads its data
// from the <script type="application/json" id="numtrace-data"> block, whose
// content is the marker kHtmlDataMarker in the template.
//
// Example:
//   std::string_view page = HtmlTemplate();
//   size_t at = page.find(kHtmlDataMarker);  // where HtmlReport puts the data
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_

#include <string_view>

namespace numtrace::analyzer {

inline constexpr std::string_view kHtmlDataMarker = "__NUMTRACE_DATA__";
std::string_view HtmlTemplate();

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_TEMPLATE_H_
