#include "analyzer/report/roots_report.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "analyzer/report/provenance_fields.h"
#include "common/names/normalize.h"

namespace numtrace::analyzer {
namespace {

void Entry(const RankDiff& rd, uint32_t pair, JsonWriter& w) {
  const DiffResult& res = *rd.result;
  const KernelPair& p = res.alignment.pairs[pair];
  const PairVerdict& v = res.verdicts[pair];
  w.BeginObject();
  w.Key("a_seq").Uint(rd.a->kernels[p.a].seq).Key("b_seq").Uint(rd.b->kernels[p.b].seq);
  w.Key("order").Uint(LaunchOrder(rd.a->kernels[p.a]));
  w.Key("a_name").String(rd.a->Name(rd.a->kernels[p.a]));
  w.Key("b_name").String(rd.b->Name(rd.b->kernels[p.b]));
  w.Key("cause").String(CauseName(v.cause));
  w.Key("score").Double(v.score);
  w.Key("kind").String(DivergenceKind(v.status));
  w.Key("descendants").Uint(res.roots.descendants[pair]);
  ProvenanceFields(ProvenanceOf(*rd.a, &rd.a->kernels[p.a], *rd.b, &rd.b->kernels[p.b]), w);
  w.EndObject();
}

}  // namespace

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
  const Roots& o = rd.result->roots;
  w.Key("roots").BeginObject().Key("count").Uint(o.count).Key("first");
  if (o.first) Entry(rd, *o.first, w);
  else w.Null();
  w.Key("top").BeginArray();
  for (uint32_t i : o.top) Entry(rd, i, w);
  w.EndArray().EndObject();
}

std::string RootsSentence(const RankDiff& rd) {
  const DiffResult& res = *rd.result;
  if (!res.roots.first) return "";
  const uint32_t i = *res.roots.first;
  const PairVerdict& v = res.verdicts[i];
  const Kernel& k = rd.a->kernels[res.alignment.pairs[i].a];
  const std::string score = std::isfinite(v.score) ? absl::StrFormat("%.3g", v.score) : "inf";
  std::string out = "the divergence beyond tolerance starts at ";
  // An operator by its key; a kernel by its short name (templates elided),
  // as the terminal's lines name it.
  out.append(k.level == RecordLevel::kOp ? rd.a->DisplayName(k) : ShortName(rd.a->DisplayName(k)));
  // Where in the model (trace format 1.2 provenance), when the traces carry it.
  const PairProvenance pv = ProvenanceOf(*rd.a, &k, *rd.b, &rd.b->kernels[res.alignment.pairs[i].b]);
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
