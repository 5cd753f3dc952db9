// File: common/format/utf8.h
//
// One UTF-8 validity check for everything that writes strings taken from
// input files: the JSON writers (invalid bytes become escapes, so output is
// always valid UTF-8) and the terminal escaping (analyzer/report/terminal_text).
// Overlong forms (C0, C1 leads) and code points past U+10FFFF (leads F5..FF)
// are invalid; surrogates are not checked.
//
// Example:
//   Utf8SequenceLength("\xc3\xa9", 0);  // 2 (é)
//   Utf8SequenceLength("\xc3(", 0);     // 0: bad continuation byte
#ifndef NUMTRACE_COMMON_FORMAT_UTF8_H_
#define NUMTRACE_COMMON_FORMAT_UTF8_H_

#include <cstddef>
#include <string_view>

namespace numtrace {

// Length (2..4) of the valid multi-byte UTF-8 sequence starting at s[i], or
// 0 when s[i] does not start one (ASCII included).
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_UTF8_H_
