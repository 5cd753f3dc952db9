// File: common/format/enum_list.h
//
// One list per enumeration: an X-macro names each enumerator once with its
// JSON spelling, and these helpers make the enum, its count and its names
// from that single list, so the C++ order, the summary's words and the HTML
// report's columns cannot drift apart.
//
// Example:
//   #define MY_COLORS(X) X(kRed, "red") X(kBlue, "blue")
//   enum class Color : uint8_t { MY_COLORS(NUMTRACE_ENUMERATOR) };
//   inline constexpr std::string_view kColorNames[] = {MY_COLORS(NUMTRACE_ENUM_NAME)};
#ifndef NUMTRACE_COMMON_FORMAT_ENUM_LIST_H_
#define NUMTRACE_COMMON_FORMAT_ENUM_LIST_H_

#define NUMTRACE_ENUMERATOR(id, name) id,
#define NUMTRACE_ENUM_NAME(id, name) name,

#endif  // NUMTRACE_COMMON_FORMAT_ENUM_LIST_H_
