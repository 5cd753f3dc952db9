#include "analyzer/report/html_page.h"

#include <algorithm>

#include "analyzer/report/html_escape.h"

namespace numtrace::analyzer {

std::string FillTemplate(std::string_view tpl,
                         std::initializer_list<std::pair<std::string_view, const std::string*>> parts) {
  size_t size = tpl.size();
  for (const auto& [marker, text] : parts) size += text->size();
  std::string page;
  page.reserve(size);
  size_t at = 0;
  for (const auto& [marker, text] : parts) {
    const size_t found = tpl.find(marker, at);
    if (found == std::string_view::npos) continue;  // (a template without it: a build error in tests)
    page.append(tpl.substr(at, found - at)).append(*text);
    at = found + marker.size();
  }
  page.append(tpl.substr(at));
  return page;
}

void AppendVerdictBadge(std::string_view word, Verdict colour, std::string* out) {
  std::string text(word);
  std::replace(text.begin(), text.end(), '_', ' ');
  out->append("<span id=\"verdict\" class=\"badge v-").append(VerdictName(colour)).append("\">");
  AppendHtmlEscaped(text, out);
  out->append("</span>");
}

void AppendRankPicker(const std::vector<std::pair<std::string, std::string>>& options, size_t selected,
                      std::string* out) {
  out->append("<span id=\"rankpick\">");
  if (options.size() > 1) {
    out->append("<select id=\"rank\">");
    for (size_t k = 0; k < options.size(); ++k) {
      out->append("<option value=\"");
      AppendHtmlEscaped(options[k].first, out);
      out->append(k == selected ? "\" selected>" : "\">");
      AppendHtmlEscaped(options[k].second, out);
      out->append("</option>");
    }
    out->append("</select>");
  }
  out->append("</span>");
}

}  // namespace numtrace::analyzer
