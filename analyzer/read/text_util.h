// File: analyzer/read/text_util.h
//
// Small std::string_view helpers for the importers. Debian's Abseil is built
// with its own absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0), which
// does not convert from std::string_view; these keep our code on
// std::string_view and bridge to absl::StrCat in one place.
//
// Example:
//   Cat(path, ":", 12, ": ", std::string_view("bad"))  -> "p:12: bad"
#ifndef NUMTRACE_ANALYZER_READ_TEXT_UTIL_H_
#define NUMTRACE_ANALYZER_READ_TEXT_UTIL_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/text/one_line.h"

namespace numtrace::analyzer {

namespace text_internal {
template <typename T>
auto ToAlphaNum(const T& v) {
  if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_arithmetic_v<T>) {
    std::string_view s(v);
    return absl::string_view(s.data(), s.size());
  } else {
    return v;
  }
}
}  // namespace text_internal

// absl::StrCat that also takes std::string_view.
template <typename... T>
std::string Cat(const T&... v) {
  return absl::StrCat(text_internal::ToAlphaNum(v)...);
}

// The importers' error for bad input: "path:line: reason" (the spec's form),
// always one line whatever the input put into `reason`.
inline absl::Status LineError(std::string_view path, uint64_t line, std::string_view reason) {
  return absl::InvalidArgumentError(Cat(path, ":", line, ": ", OneLine(reason)));
}

inline std::string_view Message(const absl::Status& s) {
  return {s.message().data(), s.message().size()};
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

inline bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// The whole of `s` as a decimal unsigned integer.
inline bool ParseUint(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_TEXT_UTIL_H_
