#include "analyzer/report/json_summary.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "analyzer/report/environment_report.h"
#include "analyzer/report/steps_report.h"
#include "analyzer/report/roots_report.h"
#include "analyzer/report/summary_merge.h"
#include "common/format/diff_summary.h"
#include "analyzer/report/provenance_fields.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {
namespace {

// Roll-up sides have no single trace: health is summed over ranks.
void Side(std::string_view path, std::string_view label, uint64_t kernels, const SideHealth& h,
          const Trace* single, JsonWriter& w) {
  w.BeginObject().Key("path").String(path).Key("label").String(label).Key("kernels").Uint(kernels);
  w.Key("truncated").Bool(h.truncated).Key("dropped").Uint(h.dropped).Key("unmeasured").Uint(h.unmeasured);
  w.Key("undigested").Uint(h.undigested);
  if (single != nullptr && single->footer && !single->footer->counters.empty()) {
    w.Key("counters").BeginObject();
    for (const auto& [name, count] : single->footer->counters) w.Key(name).Uint(count);
    w.EndObject();
  }
  w.EndObject();
}

void Counts(const DiffCounts& c, JsonWriter& w) {
  w.Key("counts").BeginObject().Key("pairs").Uint(c.pairs).Key("bitwise_equal").Uint(c.bitwise_equal);
  w.Key("within_tolerance").Uint(c.within_tolerance).Key("diverged").Uint(c.diverged);
  w.Key("only_a").Uint(c.only_a).Key("only_b").Uint(c.only_b).EndObject();
  w.Key("match_methods").BeginObject();
  for (int m = 0; m < kMatchMethodCount; ++m) w.Key(MatchMethodName(static_cast<MatchMethod>(m))).Uint(c.by_method[m]);
  w.EndObject();
}

const Buffer* BufferAt(const Trace& t, const Kernel& k, int32_t buffer) {
  if (buffer < 0 || static_cast<uint32_t>(buffer) >= k.buffer_count) return nullptr;
  return &t.BuffersOf(k)[buffer];
}

void RankField(int64_t rank, JsonWriter& w) {
  if (rank >= 0) w.Key("rank").Int(rank);
}

// `rank` >= 0 adds a "rank" field (roll-up of directory inputs).
void FirstDivergence(const RankDiff* rd, int64_t rank, JsonWriter& w) {
  w.Key("first_divergence");
  if (rd == nullptr || !rd->result->first_divergence) {
    w.Null();
    return;
  }
  const DiffResult& res = *rd->result;
  const uint32_t i = *res.first_divergence;
  const KernelPair& p = res.alignment.pairs[i];
  const PairVerdict& v = res.verdicts[i];
  const Kernel& ka = rd->a->kernels[p.a];
  const Kernel& kb = rd->b->kernels[p.b];
  const Buffer* ba = BufferAt(*rd->a, ka, v.a_buffer);
  const Buffer* bb = BufferAt(*rd->b, kb, v.b_buffer);
  w.BeginObject();
  RankField(rank, w);
  w.Key("a_seq").Uint(ka.seq).Key("b_seq").Uint(kb.seq);
  // By this order the roll-up over ranks (and `numtrace merge`) picks the first.
  w.Key("order").Uint(LaunchOrder(ka));
  w.Key("a_name").String(rd->a->Name(ka)).Key("b_name").String(rd->b->Name(kb));
  w.Key("a_arg");
  ba ? w.Uint(ba->arg) : w.Null();
  w.Key("b_arg");
  bb ? w.Uint(bb->arg) : w.Null();
  // Both dtypes: a pair compared as raw bytes says which labels disagreed.
  if (ba) w.Key("a_dtype").String(DTypeName(ba->dtype));
  if (bb) w.Key("b_dtype").String(DTypeName(bb->dtype));
  w.Key("rel_diff").Double(v.rel_diff);  // null when infinite (e.g. NaN appeared)
  w.Key("score").Double(v.score);        // null when no threshold applies
  w.Key("kind").String(DivergenceKind(v.status));
  w.Key("cause").String(CauseName(v.cause));
  ProvenanceFields(ProvenanceOf(*rd->a, &ka, *rd->b, &kb), w);
  w.EndObject();
}

void OriginEntry(const RankDiff& rd, uint32_t i, int64_t rank, JsonWriter& w) {
  const DiffResult& res = *rd.result;
  const KernelPair& p = res.alignment.pairs[i];
  const PairVerdict& v = res.verdicts[i];
  w.BeginObject();
  RankField(rank, w);
  w.Key("a_seq").Uint(rd.a->kernels[p.a].seq).Key("b_seq").Uint(rd.b->kernels[p.b].seq);
  w.Key("order").Uint(LaunchOrder(rd.a->kernels[p.a]));
  w.Key("a_name").String(rd.a->Name(rd.a->kernels[p.a])).Key("b_name").String(rd.b->Name(rd.b->kernels[p.b]));
  w.Key("score").Double(v.score);
  w.Key("status").String(VerdictName(IsDiverged(v.status) ? Verdict::kDiverged : Verdict::kWithinTolerance));
  w.Key("descendants").Uint(res.origins.descendants[i]);
  ProvenanceFields(ProvenanceOf(*rd.a, &rd.a->kernels[p.a], *rd.b, &rd.b->kernels[p.b]), w);
  w.EndObject();
}

struct RankedPair {
  const RankDiff* rd;
  uint32_t pair;
};

// `origins` of one rank (rank < 0) or rolled up over ranks (rank fields on).
void WriteOrigins(const std::vector<const RankDiff*>& ranks, bool with_rank, JsonWriter& w) {
  uint64_t count = 0, diverged = 0;
  size_t top_n = 0;
  std::optional<RankedPair> first;
  uint64_t first_order = 0;
  std::vector<RankedPair> top;
  for (const RankDiff* rd : ranks) {
    const Origins& o = rd->result->origins;
    count += o.count;
    diverged += o.diverged;
    top_n = std::max(top_n, o.top.size());
    for (uint32_t i : o.top) top.push_back({rd, i});
    if (o.first) {
      const uint64_t order = LaunchOrder(rd->a->kernels[rd->result->alignment.pairs[*o.first].a]);
      if (!first || order < first_order) {
        first = RankedPair{rd, *o.first};
        first_order = order;
      }
    }
  }
  std::stable_sort(top.begin(), top.end(), [](const RankedPair& x, const RankedPair& y) {
    return x.rd->result->verdicts[x.pair].score > y.rd->result->verdicts[y.pair].score;
  });
  if (top.size() > top_n) top.resize(top_n);
  w.Key("origins").BeginObject().Key("count").Uint(count).Key("diverged").Uint(diverged).Key("first");
  if (first) {
    OriginEntry(*first->rd, first->pair, with_rank ? first->rd->rank : -1, w);
  } else {
    w.Null();
  }
  w.Key("top").BeginArray();
  for (const RankedPair& t : top) OriginEntry(*t.rd, t.pair, with_rank ? t.rd->rank : -1, w);
  w.EndArray().EndObject();
}

// `side_a`: the kernel is run A's (its provenance as a_scope/a_op), else B's.
void Nonfinite(const Trace* t, std::optional<uint32_t> kernel, int64_t rank, bool side_a, JsonWriter& w) {
  if (t == nullptr || !kernel) {
    w.Null();
    return;
  }
  const Kernel& k = t->kernels[*kernel];
  w.BeginObject();
  RankField(rank, w);
  w.Key("seq").Uint(k.seq).Key("order").Uint(LaunchOrder(k)).Key("name").String(t->Name(k));
  ProvenanceFields(side_a ? ProvenanceOf(*t, &k, *t, nullptr) : ProvenanceOf(*t, nullptr, *t, &k), w);
  w.EndObject();
}

void Tolerances(const Tolerance& t, JsonWriter& w) {
  w.Key("tolerance").BeginObject().Key("rtol").Double(t.rtol).Key("atol").Double(t.atol).EndObject();
}

void Header(JsonWriter& w) { w.Key("format").String(kDiffSummaryFormat).Key("version").Int(kDiffSummaryVersion); }

// The summary of one rank; `with_rank` for entries of the `ranks` list.
void RankSummary(const RankDiff& rd, std::string_view path_a, std::string_view path_b, bool with_rank,
                 JsonWriter& w) {
  const DiffResult& res = *rd.result;
  const SideHealth ha = HealthOf(*rd.a), hb = HealthOf(*rd.b);
  w.BeginObject();
  Header(w);
  if (with_rank) w.Key("rank").Int(rd.rank);
  w.Key("a");
  Side(path_a, rd.a->label, rd.a->kernels.size(), ha, rd.a, w);
  w.Key("b");
  Side(path_b, rd.b->label, rd.b->kernels.size(), hb, rd.b, w);
  Tolerances(res.tolerance, w);
  w.Key("verdict").String(VerdictName(res.verdict));
  w.Key("complete").Bool(ha.complete() && hb.complete() && StepsPaired(rd));
  if (res.environment) WriteEnvironmentJson(*res.environment, w);
  Counts(res.counts, w);
  FirstDivergence(&rd, -1, w);
  w.Key("first_nonfinite").BeginObject().Key("a");
  Nonfinite(rd.a, res.first_nonfinite_a, -1, true, w);
  w.Key("b");
  Nonfinite(rd.b, res.first_nonfinite_b, -1, false, w);
  w.EndObject();
  WriteOrigins({&rd}, false, w);
  WriteStepsJson(rd, /*strip=*/false, w);
  WriteRoots({&rd}, false, w);
  ModulesField(*rd.a, *rd.b, res, w);
  w.EndObject();
}

}  // namespace

std::string JsonSummary(const DiffReport& report) {
  std::string out;
  JsonWriter w(&out);
  if (!report.per_rank && report.ranks.size() == 1) {
    RankSummary(report.ranks[0], report.path_a, report.path_b, false, w);
    out.push_back('\n');
    return out;
  }
  // Directories: the top level is rolled up from the per-rank entries, by
  // the roll-up numtrace merge applies to shards (summary_merge.h).
  std::vector<std::string> entries;
  for (const RankDiff& rd : report.ranks) {
    JsonWriter e(&entries.emplace_back());
    RankSummary(rd, rd.a->path, rd.b->path, true, e);
  }
  absl::StatusOr<std::string> rolled = RollUpRankEntries(report.path_a, report.path_b, entries, report.shard_of);
  // Entries written a moment ago always read back: failing is a bug here.
  if (!rolled.ok()) {
    std::fprintf(stderr, "numtrace: internal error: %s\n", std::string(rolled.status().message()).c_str());
    std::abort();
  }
  return *std::move(rolled);
}

}  // namespace numtrace::analyzer
