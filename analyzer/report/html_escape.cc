#include "analyzer/report/html_escape.h"

namespace numtrace::analyzer {

void AppendHtmlEscaped(std::string_view text, std::string* out) {
  out->reserve(out->size() + text.size());
  for (char c : text) {
    switch (c) {
      case '&': out->append("&amp;"); break;
      case '<': out->append("&lt;"); break;
      case '>': out->append("&gt;"); break;
      case '"': out->append("&quot;"); break;
      case '\'': out->append("&#39;"); break;
      default: out->push_back(c);
    }
  }
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  AppendHtmlEscaped(text, &out);
  return out;
}

}  // namespace numtrace::analyzer
