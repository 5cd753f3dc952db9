// File: analyzer/judge/environment_diff.h
//
// What else differed between two runs: their `environment`s (the header's
// object merged with every `environment` record, docs/format.md), compared
// key by key. Differences come in the key table's order
// (common/format/environment.h): the numerically relevant ones first, each
// with its one-line effect, so every report shows them before any kernel
// and the verdict line can name the relevant ones.
//
// Example:
//   std::optional<EnvironmentDiff> d = CompareEnvironments(a, b);
//   d->differs[0].key;          // "torch.matmul.allow_tf32"
//   d->differs[0].info->effect; // "TF32: fp32 matmuls round inputs ..."
#ifndef NUMTRACE_ANALYZER_JUDGE_ENVIRONMENT_DIFF_H_
#define NUMTRACE_ANALYZER_JUDGE_ENVIRONMENT_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/format/environment.h"

namespace numtrace::analyzer {

// Not included: diff_result.h includes this header, and the trace model
// must not come with every user of a diff result.
struct Trace;

struct EnvDifference {
  std::string key, a, b;
  const EnvironmentKey* info = nullptr;  // nullptr: a key the table does not know
  bool relevant() const { return info != nullptr && info->relevant; }
};

struct EnvironmentDiff {
  std::vector<EnvDifference> differs;      // relevant first, then table order, then by key
  std::vector<std::string> only_a, only_b;  // keys one side recorded, in the same order
  uint64_t same = 0;
  bool a_recorded = false, b_recorded = false;  // whether each side had an environment at all
};

// nullopt when neither trace has an environment (a DebugMode log has none).
std::optional<EnvironmentDiff> CompareEnvironments(const Trace& a, const Trace& b);

// The relevant differences whose setting can change the launch named
// `name` with operator `op` (the first divergence card's "affected by").
std::vector<const EnvDifference*> DifferencesAffecting(const EnvironmentDiff& d, std::string_view name,
                                                       std::string_view op);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_ENVIRONMENT_DIFF_H_
