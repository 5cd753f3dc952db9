#include "common/settings/value_parsers.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>

#include "common/text/trim.h"

namespace numtrace::settings {

std::optional<uint64_t> ParseCount(std::string_view s) {
  s = Trim(s);
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> ParseBool(std::string_view s) {
  s = Trim(s);
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off" || lower.empty()) return false;
  return std::nullopt;
}

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  text = Trim(text);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  auto n = ParseCount(text.substr(0, digits));
  if (!n) return std::nullopt;
  std::string unit(Trim(text.substr(digits)));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  else return std::nullopt;
  if (shift && *n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return *n << shift;
}

}  // namespace numtrace::settings
