// File: common/text/trim.h
//
// The one rule for trimming text that came from outside - a setting's value,
// a line or field of an input file, a child process's stderr, a piece of a
// demangled kernel name: ASCII whitespace (space, \t, \n, \v, \f, \r) comes
// off the ends, nothing else does. That is the C locale's isspace set and
// absl::StripAsciiWhitespace's, fixed here for two reasons:
//   * std::isspace follows the process's locale, and the shim runs inside a
//     job that may set one (in a Latin-1 locale byte 0xA0 is a space, so a
//     UTF-8 name could lose half a character);
//   * Abseil's function cannot serve every caller: libnumtrace.so links no
//     Abseil, and Debian's Abseil has its own string_view.
// No caller gives an edge blank a meaning: each trims to read a word, a
// number or a name. The wider set keeps a value whose line ended in "\r\n"
// (a file or an env file written on Windows) readable where a narrower set
// refused it. Standard C++ only: the shim includes it.
//
// Example:
//   Trim(" 2,5\r\n")        // "2,5"
//   TrimLeft("\t{\"a\": 1}")  // "{\"a\": 1}"
#ifndef NUMTRACE_COMMON_TEXT_TRIM_H_
#define NUMTRACE_COMMON_TEXT_TRIM_H_

#include <string_view>

namespace numtrace {

// True for the six ASCII whitespace bytes, whatever the locale.
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  return s;
}

inline std::string_view Trim(std::string_view s) {
  s = TrimLeft(s);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_TEXT_TRIM_H_
