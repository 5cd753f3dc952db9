// File: common/settings/value_parsers.h
//
// The value parsers the settings table (settings.cc) is made of, shared with
// the readers that take a setting's value back: a switch (ParseBool), a
// count and a byte size. Each ignores blanks around the value
// (common/text/trim.h) and returns nullopt for anything it does not accept,
// so the caller can name the variable, the value and the accepted forms in
// its one error line.
//
// Example:
//   ParseBool(" Yes ");     // true
//   ParseCount("4096");     // 4096
//   ParseByteSize("64MiB"); // 67108864
#ifndef NUMTRACE_COMMON_SETTINGS_VALUE_PARSERS_H_
#define NUMTRACE_COMMON_SETTINGS_VALUE_PARSERS_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace numtrace::settings {

// The one boolean parser of every NUMTRACE_* switch (ENABLE, STRICT, any
// later one): the words of kBoolWords, any case; empty is false. nullopt for
// anything else.
[[nodiscard]] std::optional<bool> ParseBool(std::string_view text);
inline constexpr std::string_view kBoolWords = "1, true, yes, on (or 0, false, no, off; any case)";

// A decimal count.
[[nodiscard]] std::optional<uint64_t> ParseCount(std::string_view text);

// "64MiB", "1G", "4096", "512k": binary multiples (k, m, g with an optional
// b or ib, any case); nullopt past 2^64.
[[nodiscard]] std::optional<uint64_t> ParseByteSize(std::string_view text);

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_VALUE_PARSERS_H_
