#include "common/text/terminal_safe.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "common/text/utf8.h"

namespace numtrace {
namespace {

void Hex(unsigned char c, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02x", c);
  out->append(buf);
}

// The code point of the valid UTF-8 sequence of `len` bytes at s[i].
uint32_t CodePoint(std::string_view s, size_t i, size_t len) {
  static constexpr unsigned char kLead[] = {0, 0, 0x1f, 0x0f, 0x07};
  uint32_t cp = static_cast<unsigned char>(s[i]) & kLead[len];
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  return cp;
}

// Characters that reorder or break a line on a terminal although they are
// valid UTF-8: the bidi controls (a U+202E makes a line read backwards) and
// the line and paragraph separators.
bool Reorders(uint32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

size_t TerminalInertLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return c < 0x20 || c == 0x7f ? 0 : 1;
  const size_t len = Utf8SequenceLength(s, i);
  if (len == 0) return 0;
  const uint32_t cp = CodePoint(s, i, len);
  if (cp < 0xA0 || Reorders(cp)) return 0;  // U+0080..U+009F: C1 controls (0x9b is a CSI)
  return len;
}

std::string TerminalSafe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {
      out.append("^[");
      ++i;
    } else if (const size_t len = TerminalInertLength(s, i); len != 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      // Every byte of a C1 or bidi control, or one byte that is a control or not UTF-8.
      const size_t n = std::max<size_t>(Utf8SequenceLength(s, i), 1);
      for (size_t k = 0; k < n; ++k) Hex(static_cast<unsigned char>(s[i + k]), &out);
      i += n;
    }
  }
  return out;
}

std::string ErrorLine(std::string_view program, std::string_view message) {
  std::string line(program);
  line.append(": ").append(TerminalSafe(message)).append("\n");
  return line;
}

}  // namespace numtrace
