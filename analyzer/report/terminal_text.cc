#include "analyzer/report/terminal_text.h"

#include <cstdio>

namespace numtrace::analyzer {
namespace {

void Hex(unsigned char c, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02x", c);
  out->append(buf);
}

// Length of the valid UTF-8 sequence at s[i] (2..4), or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

std::string TerminalSafe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {
      out.append("^[");
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      Hex(c, &out);
      ++i;
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (size_t len = Utf8Length(s, i); len == 0) {
      Hex(c, &out);
      ++i;
    } else if (c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      Hex(c, &out);  // U+0080..U+009F: C1 controls (0x9b is a CSI)
      Hex(static_cast<unsigned char>(s[i + 1]), &out);
      i += 2;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace numtrace::analyzer
