// File: analyzer/report/html_escape.h
//
// The analyzer's two escapes for HTML pages, each written once:
// - HtmlEscape: text placed in markup (element text and attribute values):
//   & < > " and ' become entities.
// - AppendScriptSafe: JSON placed inside a <script> element. JSON text is
//   left as it is except '<', '>', '&' (outside strings they never occur, so
//   this covers every "</script" and "<!--" a trace string could carry) and
//   U+2028/U+2029, which become \uXXXX escapes; the result parses back to
//   the same JSON value. Every data block of every page goes through it
//   (html_report.cc, cross_rank_report.cc).
//
// Example:
//   out += "<code>" + HtmlEscape(kernel_name) + "</code>";
//   AppendScriptSafe(json_summary, &page);   // between <script> tags
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_ESCAPE_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_ESCAPE_H_

#include <string>
#include <string_view>

namespace numtrace::analyzer {

void AppendHtmlEscaped(std::string_view text, std::string* out);
std::string HtmlEscape(std::string_view text);

// `json` must be JSON text (any value); appends it script-safe to `out`.
void AppendScriptSafe(std::string_view json, std::string* out);
// `s` as a JSON string, script-safe.
void AppendScriptSafeJsonString(std::string_view s, std::string* out);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_ESCAPE_H_
