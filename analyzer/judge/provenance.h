// File: analyzer/judge/provenance.h
//
// Where in the model a pair of kernels came from, for every report: the
// module scope, operator, phase and source line of each side (trace format
// 1.2; the summary's a_scope, b_scope, a_op, b_op, phase, a_src, b_src), one label for people
// ("layers.1.fc (aten::addmm, forward)"), and the per-module roll-up
// (diverged pairs and first divergence per module). One definition used by
// the first divergence, the first NaN/Inf, origins and roots alike.
//
// Example:
//   PairProvenance p = ProvenanceOf(a, &a.kernels[pair.a], b, &b.kernels[pair.b]);
//   ProvenanceLabel(p.a_scope, p.a_op, p.phase);   // "layers.1.fc (aten::addmm, forward)"
//   ProvenanceLabel(p.a_scope, p.a_op, p.phase, p.a_src);  // "... at train.py:42"
//   std::vector<ModuleRollup> m = RollUpModules(a, b, result);
#ifndef NUMTRACE_ANALYZER_JUDGE_PROVENANCE_H_
#define NUMTRACE_ANALYZER_JUDGE_PROVENANCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// Views into the traces' string pools: valid while the traces live.
struct PairProvenance {
  std::optional<std::string_view> a_scope, b_scope;
  std::optional<std::string_view> a_op, b_op;
  std::optional<std::string_view> a_src, b_src;  // "train.py:42"
  Phase phase = Phase::kNone;  // A's phase, else B's
  bool any() const { return a_scope || b_scope || a_op || b_op || a_src || b_src || phase != Phase::kNone; }
};

// Either kernel may be null (one side only, e.g. a first NaN/Inf).
PairProvenance ProvenanceOf(const Trace& a, const Kernel* ka, const Trace& b, const Kernel* kb);

// "layers.1.fc (aten::addmm, forward)", "(root) (aten::mm)", "" when nothing
// is known; with a source line "layers.1.fc (aten::addmm, forward) at
// train.py:42" (just "train.py:42" when it is all that is known). Raw text:
// the caller escapes for its output (terminal, HTML).
std::string ProvenanceLabel(std::optional<std::string_view> scope, std::optional<std::string_view> op,
                            Phase phase, std::optional<std::string_view> src = std::nullopt);

// One module's share of the diff, keyed by run A's scope (B's when A's
// kernel has none). Pairs without a scope on either side are not counted.
struct ModuleRollup {
  std::string_view scope;
  uint64_t pairs = 0;
  uint64_t diverged = 0;
  std::optional<uint32_t> first_divergence;  // pair index, the earliest in A
};

// In order of each module's first pair in A. Empty when no kernel has a scope.
std::vector<ModuleRollup> RollUpModules(const Trace& a, const Trace& b, const DiffResult& result);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_PROVENANCE_H_
