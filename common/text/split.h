// File: common/text/split.h
//
// The one rule for cutting a list setting or field into its items: every
// piece between separators, in order, empty ones included and nothing
// trimmed - n separators give n + 1 pieces, so "" is one empty piece and
// "a," is "a" then "". What an empty or blank item means is the caller's
// rule (a name filter skips it, a step or seq list refuses it), so the
// splitter drops nothing. Standard C++ only: the shim's settings use it.
//
// Example:
//   Split("1, 2", ',')   // {"1", " 2"}
//   Split("a;;b;", ';')  // {"a", "", "b", ""}
#ifndef NUMTRACE_COMMON_TEXT_SPLIT_H_
#define NUMTRACE_COMMON_TEXT_SPLIT_H_

#include <string_view>
#include <vector>

namespace numtrace {

// The pieces view `s`: they live as long as the text they came from.
inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_TEXT_SPLIT_H_
