// File: analyzer/cli/rank_list.h
//
// The rank lists of `numtrace diff A B --ranks LIST` (docs/format.md,
// "Sharded summaries"): comma-separated ranks and inclusive ranges,
// `0-15`, `3,7,9`, `0-3,8`. Parsed into ascending, distinct ranks; an empty
// item, a range backwards, a negative or non-numeric rank, or one repeated
// is an error naming the item.
//
// Example:
//   absl::StatusOr<std::vector<int64_t>> r = ParseRankList("0-3,8");  // {0,1,2,3,8}
#ifndef NUMTRACE_ANALYZER_CLI_RANK_LIST_H_
#define NUMTRACE_ANALYZER_CLI_RANK_LIST_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace numtrace::analyzer {

// At most this many ranks in one list (a typo such as 0-1000000000 is an
// error, not an allocation of gigabytes).
inline constexpr int64_t kMaxListedRanks = 1 << 20;

[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ParseRankList(std::string_view list);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_RANK_LIST_H_
