#include "analyzer/report/roots_report.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "analyzer/report/provenance_fields.h"

namespace numtrace::analyzer {

std::string_view CauseMeaning(Cause c) {
  switch (c) {
    case Cause::kOrigin: return "inputs bitwise equal";
    case Cause::kBorn: return "inputs within tolerance or from ops only one run ran";
    case Cause::kInherited: return "an input already beyond tolerance";
    case Cause::kUnknown: return "inputs not comparable";
    case Cause::kNone: return "outputs equal";
  }
  return "";
}

void WriteRoots(const RankDiff& rd, JsonWriter& w) {
  WriteRankedPairs(rd, "roots", rd.result->roots, std::nullopt, [](const PairVerdict& v, JsonWriter& w) {
    w.Key("cause").String(CauseName(v.cause));
    w.Key("score").Double(v.score);
    w.Key("kind").String(DivergenceKind(v.status));
  }, w);
}

std::string RootsSentence(const RankDiff& rd) {
  const DiffResult& res = *rd.result;
  if (!res.roots.first) return "";
  const uint32_t i = *res.roots.first;
  const PairRef p = PairAt(rd, i);
  const PairVerdict& v = p.verdict;
  const std::string score = std::isfinite(v.score) ? absl::StrFormat("%.3g", v.score) : "inf";
  std::string out = "the divergence beyond tolerance starts at ";
  out.append(KernelLabel(*rd.a, p.a));  // as the terminal's lines name it
  // Where in the model (trace format 1.2 provenance), when the traces carry it.
  const PairProvenance pv = ProvenanceOf(*rd.a, &p.a, *rd.b, &p.b);
  if (const std::string where = ProvenanceLabel(pv.a_scope, pv.a_op, pv.phase, pv.a_src); !where.empty()) {
    out.append(" in ").append(where);
  }
  out.append(" (cause ").append(CauseName(v.cause)).append(": ");
  out.append(CauseMeaning(v.cause)).append(", output score ").append(score).append("); ");
  out.append(std::to_string(res.roots.descendants[i])).append(" of the ");
  out.append(std::to_string(res.counts.diverged)).append(" diverged pairs descend from it");
  if (res.roots.count > 1) out.append(" (").append(std::to_string(res.roots.count)).append(" roots)");
  return out;
}

}  // namespace numtrace::analyzer
