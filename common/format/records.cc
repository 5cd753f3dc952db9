#include "common/format/records.h"

namespace numtrace {

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kOut: return "out";
    case Role::kIn: return "in";
    case Role::kUnknown: break;
  }
  return "unknown";
}

std::string TraceFileName(int64_t rank, int64_t pid) {
  std::string name = "rank_" + std::to_string(rank);
  if (pid >= 0) name += ".pid" + std::to_string(pid);
  return name + ".ntrace.jsonl";
}

bool ParseRole(std::string_view s, Role* out) {
  if (s == "out") *out = Role::kOut;
  else if (s == "in") *out = Role::kIn;
  else if (s == "unknown") *out = Role::kUnknown;
  else return false;
  return true;
}

std::optional<uint64_t> FooterRecord::CounterValue(CaptureCounter c) const {
  const std::string_view name = CaptureCounterName(c);
  for (const auto& [n, v] : counters) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace numtrace
