// File: analyzer/align/override_file.h
//
// The --override file (spec section 4): lines `A_KEY, B_KEY` that force a
// pair of kernels, `#` comment lines, blank lines. A key is `seq:N` (the
// kernel record with that seq) or `NAME#K` (the K-th, 0-based, occurrence of
// a kernel whose recorded name, demangled name or normalized name is NAME;
// the last `#` splits NAME from K since names may hold `#` themselves).
//
// Example:
//   absl::StatusOr<Overrides> o = ParseOverrides("seq:4, triton_poi_fused_add#0\n", "o.txt");
//   // o->rules[0].a.seq == 4; o->rules[0].b.name == "triton_poi_fused_add"
//   ResolveOverrideKey(o->rules[0].a, trace_a);  // kernel index in trace_a, or nullopt
#ifndef NUMTRACE_ANALYZER_ALIGN_OVERRIDE_FILE_H_
#define NUMTRACE_ANALYZER_ALIGN_OVERRIDE_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct OverrideKey {
  bool by_seq = false;
  uint64_t seq = 0;         // when by_seq
  std::string name;         // otherwise: NAME ...
  uint64_t occurrence = 0;  // ... and K
  std::string text;         // the key as written, for messages
};

struct OverrideRule {
  OverrideKey a, b;
  int line = 0;  // 1-based line in the file
};

struct Overrides {
  std::string path;
  std::vector<OverrideRule> rules;
};

// Parses the text of an override file. Errors name the place:
// InvalidArgumentError("PATH:LINE: reason").
[[nodiscard]] absl::StatusOr<Overrides> ParseOverrides(std::string_view text, std::string_view path);

// The largest override file read (a rule is one short line): anything
// larger is not an override file.
inline constexpr uint64_t kMaxOverrideFileBytes = uint64_t{16} << 20;

// Reads and parses PATH through ReadBoundedFile (common/io/bounded_file.h):
// a regular file of at most kMaxOverrideFileBytes; errors name the path.
[[nodiscard]] absl::StatusOr<Overrides> ReadOverrideFile(const std::string& path);

// The kernel (index into trace.kernels) a key designates, or nullopt when it
// matches nothing. Costs one pass over the trace for NAME keys.
std::optional<uint32_t> ResolveOverrideKey(const OverrideKey& key, const Trace& trace);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_ALIGN_OVERRIDE_FILE_H_
