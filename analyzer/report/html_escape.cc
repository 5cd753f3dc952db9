#include "analyzer/report/html_escape.h"

#include "common/format/jsonl_writer.h"

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

void AppendScriptSafe(std::string_view json, std::string* out) {
  out->reserve(out->size() + json.size() + json.size() / 64);
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    // Most bytes are copied as they are, in runs (not one push_back each).
    if (c != '<' && c != '>' && c != '&' && c != '\xE2') continue;
    if (c == '\xE2' && !(i + 2 < json.size() && json[i + 1] == '\x80' &&
                         (json[i + 2] == '\xA8' || json[i + 2] == '\xA9'))) {
      continue;  // another character starting with E2: UTF-8 as it is
    }
    out->append(json.data() + plain, i - plain);
    switch (c) {
      case '<': out->append("\\u003c"); break;
      case '>': out->append("\\u003e"); break;
      case '&': out->append("\\u0026"); break;
      default:
        out->append(json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
        i += 2;
    }
    plain = i + 1;
  }
  out->append(json.data() + plain, json.size() - plain);
}

void AppendScriptSafeJsonString(std::string_view s, std::string* out) {
  std::string json;
  AppendJsonString(s, &json);
  AppendScriptSafe(json, out);
}

}  // namespace numtrace::analyzer
