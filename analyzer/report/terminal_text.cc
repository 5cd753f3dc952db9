#include "analyzer/report/terminal_text.h"

#include <cstdio>

#include "common/format/utf8.h"

namespace numtrace::analyzer {
namespace {

void Hex(unsigned char c, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02x", c);
  out->append(buf);
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
    } else if (size_t len = Utf8SequenceLength(s, i); len == 0) {
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
