#include "analyzer/report/roots_report.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_format.h"
#include "analyzer/report/provenance_fields.h"
#include "common/names/normalize.h"

namespace numtrace::analyzer {
namespace {

struct RankedRoot {
  const RankDiff* rd;
  uint32_t pair;
};

void Entry(const RankedRoot& r, bool with_rank, JsonWriter& w) {
  const DiffResult& res = *r.rd->result;
  const KernelPair& p = res.alignment.pairs[r.pair];
  const PairVerdict& v = res.verdicts[r.pair];
  w.BeginObject();
  if (with_rank) w.Key("rank").Int(r.rd->rank);
  w.Key("a_seq").Uint(r.rd->a->kernels[p.a].seq).Key("b_seq").Uint(r.rd->b->kernels[p.b].seq);
  w.Key("order").Uint(LaunchOrder(r.rd->a->kernels[p.a]));
  w.Key("a_name").String(r.rd->a->Name(r.rd->a->kernels[p.a]));
  w.Key("b_name").String(r.rd->b->Name(r.rd->b->kernels[p.b]));
  w.Key("cause").String(CauseName(v.cause));
  w.Key("score").Double(v.score);
  w.Key("kind").String(DivergenceKind(v.status));
  w.Key("descendants").Uint(res.roots.descendants[r.pair]);
  ProvenanceFields(ProvenanceOf(*r.rd->a, &r.rd->a->kernels[p.a], *r.rd->b, &r.rd->b->kernels[p.b]), w);
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

void WriteRoots(const std::vector<const RankDiff*>& ranks, bool with_rank, JsonWriter& w) {
  uint64_t count = 0;
  size_t top_n = 0;
  std::optional<RankedRoot> first;
  uint64_t first_order = 0;
  std::vector<RankedRoot> top;
  for (const RankDiff* rd : ranks) {
    const Roots& o = rd->result->roots;
    count += o.count;
    top_n = std::max(top_n, o.top.size());
    for (uint32_t i : o.top) top.push_back({rd, i});
    if (o.first) {
      const uint64_t order = LaunchOrder(rd->a->kernels[rd->result->alignment.pairs[*o.first].a]);
      if (!first || order < first_order) {
        first = RankedRoot{rd, *o.first};
        first_order = order;
      }
    }
  }
  std::stable_sort(top.begin(), top.end(), [](const RankedRoot& x, const RankedRoot& y) {
    return x.rd->result->verdicts[x.pair].score > y.rd->result->verdicts[y.pair].score;
  });
  if (top.size() > top_n) top.resize(top_n);
  w.Key("roots").BeginObject().Key("count").Uint(count).Key("first");
  if (first) Entry(*first, with_rank, w);
  else w.Null();
  w.Key("top").BeginArray();
  for (const RankedRoot& t : top) Entry(t, with_rank, w);
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
