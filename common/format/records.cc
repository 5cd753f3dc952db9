#include "common/format/records.h"

namespace numtrace {

std::string_view RoleName(Role r) { return kRoleNames[static_cast<int>(r)]; }

std::string TraceFileName(int64_t rank, int64_t pid) {
  std::string name = "rank_" + std::to_string(rank);
  if (pid >= 0) name += ".pid" + std::to_string(pid);
  return name + ".ntrace.jsonl";
}

bool ParseRole(std::string_view s, Role* out) {
  auto r = EnumFromName<Role>(kRoleNames, s);
  if (r) *out = *r;
  return r.has_value();
}

std::optional<uint64_t> FooterRecord::CounterValue(CaptureCounter c) const {
  const std::string_view name = CaptureCounterName(c);
  for (const auto& [n, v] : counters) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace numtrace
