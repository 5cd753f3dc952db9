// File: common/text/utf8.h
//
// One UTF-8 validity check for everything that writes strings taken from
// input files: the JSON writers (invalid bytes become escapes, so output is
// always valid UTF-8) and the terminal escaping (common/text/terminal_safe.h).
// Overlong forms (C0, C1 leads) and code points past U+10FFFF (leads F5..FF)
// are invalid; surrogates are not checked.
//
// Example:
//   Utf8SequenceLength("\xc3\xa9", 0);  // 2 (é)
//   Utf8SequenceLength("\xc3(", 0);     // 0: bad continuation byte
#ifndef NUMTRACE_COMMON_TEXT_UTF8_H_
#define NUMTRACE_COMMON_TEXT_UTF8_H_

#include <cstddef>
#include <string>
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

// Arbitrary bytes (a process's argv) as valid UTF-8 that gives them back
// exactly (docs/format.md, `run.argv`): a byte B that is not part of valid
// UTF-8 becomes the private-use character U+EF00+B (U+EF80..U+EFFF, as
// MirBSD's OPTU-8 maps them), and so does each byte of a character already in
// that range, so that BytesFromUtf8(Utf8FromBytes(x)) == x for every x.
//   Utf8FromBytes("a\xff");       // "a\xee\xbf\xbf" (U+EFFF)
//   BytesFromUtf8("a\xee\xbf\xbf");  // "a\xff"
inline std::string Utf8FromBytes(std::string_view bytes) {
  auto escape = [](std::string* out, unsigned char b) {  // U+EF00 + b, b >= 0x80
    out->push_back(static_cast<char>(0xEE));
    out->push_back(static_cast<char>(0xBC | (b >> 6)));
    out->push_back(static_cast<char>(0x80 | (b & 0x3F)));
  };
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const size_t len = c >= 0x80 ? Utf8SequenceLength(bytes, i) : 1;
    // U+EF80..U+EFFF is EE BE 80 .. EE BF BF: escaped too, byte by byte.
    const bool ours = len == 3 && c == 0xEE && (static_cast<unsigned char>(bytes[i + 1]) & 0xFE) == 0xBE;
    if (len == 0 || ours) {
      for (size_t k = 0; k < (ours ? 3 : 1); ++k) escape(&out, static_cast<unsigned char>(bytes[i + k]));
      i += ours ? 3 : 1;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

inline std::string BytesFromUtf8(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // U+EF80..U+EFFF: EE BE 80..BF or EE BF 80..BF.
    if (c == 0xEE && i + 2 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xFE) == 0xBE &&
        (static_cast<unsigned char>(text[i + 2]) & 0xC0) == 0x80) {
      out.push_back(static_cast<char>(((static_cast<unsigned char>(text[i + 1]) & 0x03) << 6) |
                                      (static_cast<unsigned char>(text[i + 2]) & 0x3F)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_TEXT_UTF8_H_
