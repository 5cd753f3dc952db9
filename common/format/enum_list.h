// File: common/format/enum_list.h
//
// One list per enumeration: an X-macro names each enumerator once with its
// JSON spelling, and these helpers make the enum, its count and its names
// from that single list, so the C++ order, the summary's words and the HTML
// report's columns cannot drift apart. A list may carry more columns after
// the name (capture_counter_list.h: severity, description); these helpers
// take the first two.
//
// Example:
//   #define MY_COLORS(X) X(kRed, "red") X(kBlue, "blue")
//   enum class Color : uint8_t { MY_COLORS(NUMTRACE_ENUMERATOR) };
//   inline constexpr std::string_view kColorNames[] = {MY_COLORS(NUMTRACE_ENUM_NAME)};
//   EnumFromName<Color>(kColorNames, "blue");  // Color::kBlue
#ifndef NUMTRACE_COMMON_FORMAT_ENUM_LIST_H_
#define NUMTRACE_COMMON_FORMAT_ENUM_LIST_H_

#include <cstddef>
#include <optional>
#include <string_view>

#define NUMTRACE_ENUMERATOR(id, ...) id,
#define NUMTRACE_ENUM_NAME(id, name, ...) name,

// The lists themselves also reach CUDA sources that nvcc compiles as C++17
// (common/format/dtype.h in the reduction kernels); the way back from a word
// is for C++20 code only.
#if __cplusplus >= 202002L
#include <span>

namespace numtrace {

// The enumerator spelled `word` in `names` (its list's names, in order),
// if any: the one way back from a word to an enum.
template <typename E>
constexpr std::optional<E> EnumFromName(std::span<const std::string_view> names, std::string_view word) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == word) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace numtrace

#endif  // __cplusplus >= 202002L

#endif  // NUMTRACE_COMMON_FORMAT_ENUM_LIST_H_
