// File: analyzer/report/html_escape.h
//
// The one HTML escape for text placed in the analyzer's pages (element text
// and attribute values): & < > " and ' become entities. Data for scripts
// goes through html_report.h's AppendScriptSafeJsonString instead.
//
// Example:
//   out += "<code>" + HtmlEscape(kernel_name) + "</code>";
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_ESCAPE_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_ESCAPE_H_

#include <string>
#include <string_view>

namespace numtrace::analyzer {

void AppendHtmlEscaped(std::string_view text, std::string* out);
std::string HtmlEscape(std::string_view text);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_ESCAPE_H_
