// File: common/format/provenance.h
//
// Where in the model a kernel came from (trace format 1.2, "Provenance"):
// the `phase` words, one X-macro list, and the cap on scope/op/src lengths.
// Shared by the shim (which stamps and writes them), the analyzer (which
// reads, aligns and reports them) and the DebugMode reader (whose FQN, op
// and phase land in the same fields).
//
// Example:
//   Phase p;
//   ParsePhase("backward", &p);      // true, p == Phase::kBackward
//   PhaseName(Phase::kOptimizer);    // "optimizer"
#ifndef NUMTRACE_COMMON_FORMAT_PROVENANCE_H_
#define NUMTRACE_COMMON_FORMAT_PROVENANCE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/format/enum_list.h"

namespace numtrace {

// X(enumerator, JSON spelling). kNone (absent) is not in the list: it is
// never written.
#define NUMTRACE_PHASES(X)      \
  X(kForward, "forward")        \
  X(kBackward, "backward")      \
  X(kOptimizer, "optimizer")    \
  X(kOther, "other")

enum class Phase : uint8_t { NUMTRACE_PHASES(NUMTRACE_ENUMERATOR) kNone };
inline constexpr std::string_view kPhaseNames[] = {NUMTRACE_PHASES(NUMTRACE_ENUM_NAME)};
inline constexpr size_t kPhaseCount = std::size(kPhaseNames);

// "" for kNone.
constexpr std::string_view PhaseName(Phase p) {
  const auto i = static_cast<size_t>(p);
  return i < kPhaseCount ? kPhaseNames[i] : std::string_view();
}
// False (and *out untouched) for anything but the four words.
[[nodiscard]] constexpr bool ParsePhase(std::string_view s, Phase* out) {
  auto p = EnumFromName<Phase>(kPhaseNames, s);
  if (p) *out = *p;
  return p.has_value();
}

// Longest scope, op or src kept, in bytes. A module path deeper than any real
// model (torchtitan's longest FQNs are under 80 bytes) is cut here, at a UTF-8
// boundary, and counted (footer counter `provenance_capped`): a runaway name
// must not make every record of a step kilobytes long.
inline constexpr size_t kProvenanceMaxBytes = 512;

// `s` cut to at most `max` bytes without splitting a UTF-8 sequence.
constexpr std::string_view CapUtf8(std::string_view s, size_t max = kProvenanceMaxBytes) {
  if (s.size() <= max) return s;
  size_t n = max;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_PROVENANCE_H_
