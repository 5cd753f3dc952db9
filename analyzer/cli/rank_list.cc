#include "analyzer/cli/rank_list.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace numtrace::analyzer {
namespace {

bool ParseRank(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0;
}

absl::Status Bad(std::string_view item, std::string_view why) {
  return absl::InvalidArgumentError("--ranks: '" + std::string(item.substr(0, 40)) + "' " + std::string(why) +
                                    " (a list such as 0-15 or 3,7,9)");
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ParseRankList(std::string_view list) {
  std::vector<int64_t> ranks;
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const size_t dash = item.find('-');
    int64_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!ParseRank(item, &lo)) return Bad(item, "is not a rank");
      hi = lo;
    } else if (!ParseRank(item.substr(0, dash), &lo) || !ParseRank(item.substr(dash + 1), &hi)) {
      return Bad(item, "is not a range of ranks");
    } else if (hi < lo) {
      return Bad(item, "runs backwards");
    }
    if (hi - lo >= kMaxListedRanks || static_cast<int64_t>(ranks.size()) + (hi - lo) >= kMaxListedRanks) {
      return Bad(item, "lists more than 1,048,576 ranks");
    }
    for (int64_t r = lo; r <= hi; ++r) ranks.push_back(r);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  std::sort(ranks.begin(), ranks.end());
  if (auto dup = std::adjacent_find(ranks.begin(), ranks.end()); dup != ranks.end()) {
    return absl::InvalidArgumentError("--ranks: rank " + std::to_string(*dup) + " is listed twice");
  }
  return ranks;
}

}  // namespace numtrace::analyzer
