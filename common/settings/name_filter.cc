#include "common/settings/name_filter.h"

#include <utility>

#include "common/text/split.h"
#include "common/text/trim.h"

namespace numtrace::settings {

bool NameFilter::Matches(std::string_view name) const {
  if (!is_regex) return name.find(text) != std::string_view::npos;
  return regex.Search(name);
}

std::optional<std::vector<NameFilter>> ParseNameFilters(std::string_view text) {
  std::vector<NameFilter> out;
  for (std::string_view piece : Split(text, ';')) {
    std::string_view item = Trim(piece);
    if (item.empty()) continue;  // skipped: "a;;b" and "a; ;b" are "a;b", "a;" is "a"
    NameFilter f;
    f.text = std::string(item);
    if (item.starts_with("regex:")) {
      auto re = NamePattern::Compile(item.substr(6));
      if (!re || item.size() == 6) return std::nullopt;
      f.is_regex = true;
      f.regex = std::move(*re);
    }
    out.push_back(std::move(f));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace numtrace::settings
