#include "common/settings/name_filter.h"

#include <utility>

#include "common/text/trim.h"

namespace numtrace::settings {

bool NameFilter::Matches(std::string_view name) const {
  if (!is_regex) return name.find(text) != std::string_view::npos;
  return regex.Search(name);
}

std::optional<std::vector<NameFilter>> ParseNameFilters(std::string_view text) {
  std::vector<NameFilter> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = Trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
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
