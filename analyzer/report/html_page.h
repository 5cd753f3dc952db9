// File: analyzer/report/html_page.h
//
// What every numtrace HTML page shares beyond its style (html_style.css):
// filling a template's markers (html_template.h) and the header's verdict
// badge and rank picker. The diff report (html_report.cc) and the
// cross-rank page (cross_rank_report.cc) are built with these, so both
// pages head alike and no trace string is ever searched for a marker.
//
// Example:
//   std::string head;
//   AppendVerdictBadge("replicas_differ", Verdict::kDiverged, &head);
//   AppendRankPicker({{"1", "rank 1"}, {"2", "rank 2"}}, 0, &head);
//   std::string page = FillTemplate(CrossRankTemplate(), {{kHtmlHeadMarker, &head}, {kHtmlSummaryDataMarker, &data}});
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_PAGE_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_PAGE_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/format/summary_words.h"

namespace numtrace::analyzer {

// `tpl` with each marker replaced by its text, the markers taken in the
// order given (each occurs once, in that order): what a text put in earlier
// holds is never searched for a later marker.
std::string FillTemplate(std::string_view tpl,
                         std::initializer_list<std::pair<std::string_view, const std::string*>> parts);

// <span id="verdict" class="badge v-COLOUR">word</span>: `word` (a verdict
// of the page's own list, '_' shown as a space) in the colour of `colour`.
void AppendVerdictBadge(std::string_view word, Verdict colour, std::string* out);

// <span id="rankpick"><select id="rank">...</select></span> of (value, text)
// options with option `selected` chosen; nothing for fewer than two options.
// Values and texts are HTML-escaped.
void AppendRankPicker(const std::vector<std::pair<std::string, std::string>>& options, size_t selected,
                      std::string* out);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_PAGE_H_
