#include "common/settings/step_set.h"

#include <algorithm>
#include <limits>

#include "common/settings/value_parsers.h"
#include "common/text/split.h"
#include "common/text/trim.h"

namespace numtrace::settings {

std::optional<StepSet> StepSet::Parse(std::string_view text) {
  text = Trim(text);
  if (text == "all" || text == "*") return All();
  StepSet s;
  if (text == "none") return s;  // watch mode: digests only, no step in full
  for (std::string_view piece : Split(text, ',')) {
    std::string_view item = Trim(piece);  // an empty item ("1,,2", "1,") is refused below
    size_t dash = item.find('-');
    std::optional<uint64_t> lo, hi;
    if (dash == std::string_view::npos) {
      lo = hi = ParseCount(item);
    } else {
      lo = ParseCount(item.substr(0, dash));
      hi = ParseCount(item.substr(dash + 1));
    }
    constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
    if (!lo || !hi || *lo > *hi || *hi > kMax) return std::nullopt;
    s.ranges_.emplace_back(static_cast<int64_t>(*lo), static_cast<int64_t>(*hi));
  }
  std::sort(s.ranges_.begin(), s.ranges_.end());
  return s;
}

bool StepSet::Contains(int64_t step) const {
  if (all_) return step >= 0;
  for (const auto& [lo, hi] : ranges_) {
    if (step >= lo && step <= hi) return true;
  }
  return false;
}

int64_t StepSet::Last() const {
  if (all_) return std::numeric_limits<int64_t>::max();
  int64_t last = -1;
  for (const auto& r : ranges_) last = std::max(last, r.second);
  return last;
}

std::vector<int64_t> StepSet::Listed() const {
  std::vector<int64_t> out;
  for (const auto& [lo, hi] : ranges_) {
    for (int64_t s = lo; s <= hi && out.size() < 4096; ++s) out.push_back(s);
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string StepSet::ToString() const {
  if (all_) return "all";
  if (ranges_.empty()) return "none";
  std::string s;
  for (const auto& [lo, hi] : ranges_) {
    if (!s.empty()) s.push_back(',');
    s += std::to_string(lo);
    if (hi != lo) s += "-" + std::to_string(hi);
  }
  return s;
}

}  // namespace numtrace::settings
