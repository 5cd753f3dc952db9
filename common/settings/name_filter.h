// File: common/settings/name_filter.h
//
// The kernel-name filters of NUMTRACE_KERNEL and NUMTRACE_KERNEL_EXCLUDE
// (`numtrace run --kernel/--exclude`), in compute-sanitizer's style: a
// substring, or "regex:EXPR" (ECMAScript, searched anywhere in the name;
// name_pattern.h says why that engine). Several are separated by ';'; the
// shim's kernel cache lets a kernel through when any include filter matches
// its symbol or demangled name and no exclude filter does.
//
// Example:
//   auto f = ParseNameFilters("gemm; regex:^nccl");
//   (*f)[0].Matches("ampere_sgemm_128x64");   // true (substring)
//   (*f)[1].Matches("ncclKernel_AllReduce");  // true (regex)
#ifndef NUMTRACE_COMMON_SETTINGS_NAME_FILTER_H_
#define NUMTRACE_COMMON_SETTINGS_NAME_FILTER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/settings/name_pattern.h"

namespace numtrace::settings {

struct NameFilter {
  std::string text;  // as given
  bool is_regex = false;
  NamePattern regex;
  bool Matches(std::string_view name) const;
};

// "SUBSTRING" or "regex:EXPR", several separated by ';' (blanks around each
// ignored); nullopt when none or a bad regex.
[[nodiscard]] std::optional<std::vector<NameFilter>> ParseNameFilters(std::string_view text);

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_NAME_FILTER_H_
