// File: analyzer/judge/provenance.cc
//
// Pair provenance, its label and the per-module roll-up; see provenance.h.
#include "analyzer/judge/provenance.h"

#include "absl/container/flat_hash_map.h"

namespace numtrace::analyzer {

PairProvenance ProvenanceOf(const Trace& a, const Kernel* ka, const Trace& b, const Kernel* kb) {
  PairProvenance p;
  if (ka != nullptr) {
    p.a_scope = a.Scope(*ka);
    p.a_op = a.Op(*ka);
    p.a_src = a.Src(*ka);
    p.phase = a.PhaseOf(*ka);
  }
  if (kb != nullptr) {
    p.b_scope = b.Scope(*kb);
    p.b_op = b.Op(*kb);
    p.b_src = b.Src(*kb);
    if (p.phase == Phase::kNone) p.phase = b.PhaseOf(*kb);
  }
  return p;
}

std::string ProvenanceLabel(std::optional<std::string_view> scope, std::optional<std::string_view> op,
                            Phase phase, std::optional<std::string_view> src) {
  std::string out;
  if (scope) out = scope->empty() ? "(root)" : std::string(*scope);
  std::string inner;
  if (op && !op->empty()) inner = std::string(*op);
  if (phase != Phase::kNone) {
    if (!inner.empty()) inner += ", ";
    inner += PhaseName(phase);
  }
  if (!inner.empty()) {
    if (!out.empty()) out += ' ';
    out += "(" + inner + ")";
  }
  if (src && !src->empty()) {
    if (!out.empty()) out += " at ";
    out += *src;
  }
  return out;
}

std::vector<ModuleRollup> RollUpModules(const Trace& a, const Trace& b, const DiffResult& result) {
  std::vector<ModuleRollup> out;
  absl::flat_hash_map<std::string_view, size_t> index;
  const auto& pairs = result.alignment.pairs;
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    std::optional<std::string_view> scope = a.Scope(a.kernels[pairs[i].a]);
    if (!scope) scope = b.Scope(b.kernels[pairs[i].b]);
    if (!scope) continue;
    auto [it, inserted] = index.try_emplace(*scope, out.size());
    if (inserted) out.push_back({*scope});
    ModuleRollup& m = out[it->second];
    ++m.pairs;
    if (IsDiverged(result.verdicts[i].status)) {
      ++m.diverged;
      // Pairs are in A's order, so the first diverged pair seen is the earliest.
      if (!m.first_divergence) m.first_divergence = i;
    }
  }
  return out;
}

}  // namespace numtrace::analyzer
