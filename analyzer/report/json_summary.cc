#include "analyzer/report/json_summary.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "analyzer/report/environment_report.h"
#include "analyzer/report/provenance_fields.h"
#include "analyzer/report/roots_report.h"
#include "analyzer/report/steps_report.h"
#include "analyzer/report/summary_merge.h"
#include "common/format/diff_summary.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {
namespace {

const Buffer* BufferAt(const Trace& t, const Kernel& k, int32_t buffer) {
  if (buffer < 0 || static_cast<uint32_t>(buffer) >= k.buffer_count) return nullptr;
  return &t.BuffersOf(k)[buffer];
}

void FirstDivergence(const RankDiff& rd, JsonWriter& w) {
  w.Key("first_divergence");
  if (!rd.result->first_divergence) {
    w.Null();
    return;
  }
  const PairRef p = PairAt(rd, *rd.result->first_divergence);
  const PairVerdict& v = p.verdict;
  const Buffer* ba = BufferAt(*rd.a, p.a, v.a_buffer);
  const Buffer* bb = BufferAt(*rd.b, p.b, v.b_buffer);
  w.BeginObject();
  WritePairNames(rd, p, w);
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
  ProvenanceFields(ProvenanceOf(*rd.a, &p.a, *rd.b, &p.b), w);
  w.EndObject();
}

// `origins` of one rank (a directory's are RollUp's, summary_merge.cc).
void WriteOrigins(const RankDiff& rd, JsonWriter& w) {
  const Origins& o = rd.result->origins;
  WriteRankedPairs(rd, "origins", o, o.diverged, [](const PairVerdict& v, JsonWriter& w) {
    w.Key("score").Double(v.score);
    w.Key("status").String(VerdictName(IsDiverged(v.status) ? Verdict::kDiverged : Verdict::kWithinTolerance));
  }, w);
}

// `side_a`: the kernel is run A's (its provenance as a_scope/a_op), else B's.
void Nonfinite(const Trace* t, std::optional<uint32_t> kernel, bool side_a, JsonWriter& w) {
  if (!kernel) {
    w.Null();
    return;
  }
  const Kernel& k = t->kernels[*kernel];
  w.BeginObject();
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
  w.BeginObject();
  Header(w);
  if (with_rank) w.Key("rank").Int(rd.rank);
  w.Key("a");
  WriteSideJson(path_a, SideOf(*rd.a), rd.a, w);
  w.Key("b");
  WriteSideJson(path_b, SideOf(*rd.b), rd.b, w);
  Tolerances(res.tolerance, w);
  w.Key("verdict").String(VerdictName(res.verdict));
  w.Key("complete").Bool(RankComplete(rd));
  if (res.environment) WriteEnvironmentJson(*res.environment, w);
  WriteCountsJson(res.counts, w);
  FirstDivergence(rd, w);
  w.Key("first_nonfinite").BeginObject().Key("a");
  Nonfinite(rd.a, res.first_nonfinite_a, true, w);
  w.Key("b");
  Nonfinite(rd.b, res.first_nonfinite_b, false, w);
  w.EndObject();
  WriteOrigins(rd, w);
  WriteStepsJson(rd, /*strip=*/false, w);
  WriteRoots(rd, w);
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
