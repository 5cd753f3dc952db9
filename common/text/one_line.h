// File: common/text/one_line.h
//
// The one rule for quoting untrusted text (a setting's value, a field read
// from an input file, a driver's message) inside a one-line message: the
// result holds no line break and no control byte, whatever the input put
// there, so "path:line: reason" and "NAME='value' is not valid" stay one
// line and cannot move the terminal's cursor. Newline and tab read as \n and
// \t; every other control byte (CR and ESC included) as \xNN; at most `max`
// bytes, then "...". Bytes >= 0x80 pass: the terminal renderer
// (common/text/terminal_safe.h) decides what a whole line may show.
//
// Example:
//   OneLine("2\nnumtrace: forged\r")   // "2\\nnumtrace: forged\\x0d"
#ifndef NUMTRACE_COMMON_TEXT_ONE_LINE_H_
#define NUMTRACE_COMMON_TEXT_ONE_LINE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace numtrace {

inline std::string OneLine(std::string_view s, size_t max = 400) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out.append("\\x").append(1, kHex[c >> 4]).append(1, kHex[c & 15]);
    else out += ch;
  }
  return out;
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_TEXT_ONE_LINE_H_
