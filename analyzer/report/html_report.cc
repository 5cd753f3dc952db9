#include "analyzer/report/html_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "analyzer/report/capture_warnings.h"
#include "analyzer/report/dump_commands.h"
#include "analyzer/report/environment_report.h"
#include "analyzer/report/steps_report.h"
#include "analyzer/report/html_provenance.h"
#include "analyzer/report/html_template.h"
#include "analyzer/report/roots_report.h"
#include "common/names/normalize.h"
#include "common/format/json_writer.h"
#include "common/format/jsonl_writer.h"

namespace numtrace::analyzer {
namespace {

// Row kinds: the pair statuses of judge/'s list, then kernels that found no
// partner. The page reads these names from the data ("statuses").
constexpr int kOnlyA = kPairStatusCount, kOnlyB = kPairStatusCount + 1;
// Rows listed per origin for highlighting (keeps a 1M-kernel page bounded).
constexpr size_t kMaxReachRows = 100000;

void Int(int64_t v, std::string* out) {
  char buf[24];
  out->append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
}

// Two significant digits are plenty to colour and sort by; -1 stands for an
// infinite value (JSON has no Infinity).
void Rel(double v, std::string* out) {
  if (v == 0) {
    out->push_back('0');
    return;
  }
  if (!std::isfinite(v)) {
    out->append("-1");
    return;
  }
  // to_chars with a precision is printf's "%.2g" (C++17 [charconv.to.chars]),
  // without printf's format parsing.
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 2);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}
double Finite(double v) { return std::isfinite(v) ? v : -1; }

// Both runs' names, interned together: an index per distinct demangled name.
class NameTable {
 public:
  uint32_t Id(const Trace& t, const Kernel& k) {
    // An operator by its key (module path and op), not the op alone.
    std::string_view full = t.DisplayName(k);
    auto [it, added] = ids_.try_emplace(full, static_cast<uint32_t>(ids_.size()));
    if (added) names_.emplace_back(full);
    return it->second;
  }
  void Write(JsonWriter& w) const {
    w.Key("names").BeginArray();
    for (std::string_view n : names_) w.String(n);
    w.EndArray().Key("labels").BeginArray();
    for (std::string_view n : names_) w.String(ShortName(n));
    w.EndArray();
  }

 private:
  // Views into the traces, which outlive the table.
  absl::flat_hash_map<std::string_view, uint32_t> ids_;
  std::vector<std::string_view> names_;
};

void Side(const Trace& t, JsonWriter& w) {
  const SideHealth h = HealthOf(t);
  w.BeginObject().Key("path").String(t.path).Key("label").String(t.label);
  w.Key("kernels").Uint(t.kernels.size()).Key("truncated").Bool(h.truncated);
  w.Key("dropped").Uint(h.dropped).Key("unmeasured").Uint(h.unmeasured);
  w.Key("undigested").Uint(h.undigested);
  w.EndObject();
}

void Stats(const Buffer& b, JsonWriter& w) {
  w.BeginObject().Key("arg").Uint(b.arg).Key("dtype").String(DTypeName(b.dtype));
  w.Key("role").String(RoleName(b.role)).Key("bytes").Uint(b.bytes);
  std::string fields;
  AppendStatsFields(b.stats, b.dtype, &fields);
  w.RawMembers(fields).EndObject();
}

void KernelInfo(const Trace& t, uint32_t index, int32_t buffer, NameTable& names, JsonWriter& w) {
  const Kernel& k = t.kernels[index];
  w.BeginObject().Key("seq").Uint(k.seq).Key("name").Uint(names.Id(t, k));
  if (k.step >= 0) w.Key("step").Int(k.step);
  if (k.stream != kNoValue) w.Key("stream").Uint(k.stream);
  w.Key("grid").BeginArray().Uint(k.grid[0]).Uint(k.grid[1]).Uint(k.grid[2]).EndArray();
  w.Key("block").BeginArray().Uint(k.block[0]).Uint(k.block[1]).Uint(k.block[2]).EndArray();
  w.Key("buffers").Uint(k.buffer_count);
  KernelProvenanceMembers(t, k, w);
  if (buffer >= 0 && static_cast<uint32_t>(buffer) < k.buffer_count) {
    w.Key("buf");
    Stats(t.BuffersOf(k)[buffer], w);
  }
  w.EndObject();
}

// The table's columns as comma-separated numbers (the bulk of the page).
struct Columns {
  std::string a, b, an, bn, s, m, c, sc, r;
  int64_t last_a = -1, last_b = -1;
  int64_t rows = 0;

  // Seqs are written as the step from the previous present seq (mostly 1);
  // 0 means "absent on this side" (seqs on one side are distinct).
  static void Seq(std::string* col, int64_t* last, int64_t seq) {
    if (!col->empty()) col->push_back(',');
    if (seq < 0) {
      col->push_back('0');
      return;
    }
    Int(seq - *last, col);
    *last = seq;
  }
  static void Put(std::string* col, int64_t v) {
    if (!col->empty()) col->push_back(',');
    Int(v, col);
  }
  static void PutRel(std::string* col, double v) {
    if (!col->empty()) col->push_back(',');
    Rel(v, col);
  }
  void Row(int64_t seq_a, int64_t seq_b, uint32_t name_a, uint32_t name_b, int status, int method,
           Cause cause, double score, double rel) {
    Seq(&a, &last_a, seq_a);
    Seq(&b, &last_b, seq_b);
    Put(&an, name_a);
    Put(&bn, name_b);
    Put(&s, status);
    Put(&m, method);
    Put(&c, static_cast<int>(cause));
    PutRel(&sc, score);
    PutRel(&r, rel);
    ++rows;
  }
};

// The enum lists the page names its columns and chips from.
template <size_t N>
void Names(std::string_view key, const std::string_view (&names)[N], JsonWriter& w) {
  w.Key(key).BeginArray();
  for (std::string_view n : names) w.String(n);
  w.EndArray();
}

void EnumLists(JsonWriter& w) {
  w.Key("statuses").BeginArray();
  for (std::string_view n : kPairStatusNames) w.String(n);
  w.String("only_a").String("only_b").EndArray();
  w.Key("diverged_statuses").BeginArray();
  for (int i = 0; i < kPairStatusCount; ++i) {
    if (IsDiverged(static_cast<PairStatus>(i))) w.Int(i);
  }
  w.EndArray();
  w.Key("methods_names").BeginArray();
  for (int m = 0; m < kMatchMethodCount; ++m) w.String(MatchMethodName(static_cast<MatchMethod>(m)));
  w.EndArray();
  Names("causes", kCauseNames, w);
}

void Warnings(const Trace& ta, const Trace& tb, const Alignment& al, JsonWriter& w) {
  w.Key("warnings").BeginArray();
  for (const Trace* t : {&ta, &tb}) {
    const std::string side = t == &ta ? "A" : "B";
    const SideHealth h = HealthOf(*t);
    if (h.truncated) w.String(t->path + " is truncated (cut short: no footer, the process was killed)");
    if (h.dropped) w.String(t->path + ": records dropped (" + std::to_string(h.dropped) + ")");
    if (h.unmeasured) w.String(std::to_string(h.unmeasured) + " kernels ran unmeasured in " + side);
    if (h.undigested) w.String(std::to_string(h.undigested) + " launches not digested in " + side);
    for (const std::string& c : CaptureWarnings(*t, side)) w.String(c);
  }
  for (const std::string& s : al.warnings) w.String(s);
  w.EndArray();
  w.Key("notes").BeginArray();
  for (const Trace* t : {&ta, &tb}) {
    const std::string counters = CountersText(*t);
    if (!counters.empty()) w.String(std::string(t == &ta ? "A" : "B") + " counters: " + counters);
  }
  w.EndArray();
}

void RankData(const RankDiff& rd, const HtmlOptions& opt, JsonWriter& w) {
  const Trace& ta = *rd.a;
  const Trace& tb = *rd.b;
  const DiffResult& res = *rd.result;
  const Alignment& al = res.alignment;
  NameTable names;
  Columns cols;
  HtmlModuleColumn modules;
  int64_t first_row = -1;
  std::vector<int64_t> pair_row(al.pairs.size());
  size_t ia = 0, ib = 0;
  auto only_a = [&](uint32_t k) {
    cols.Row(static_cast<int64_t>(ta.kernels[k].seq), -1, names.Id(ta, ta.kernels[k]), 0, kOnlyA, 0,
             Cause::kNone, 0, 0);
    modules.Row(ta, &ta.kernels[k], tb, nullptr);
  };
  auto only_b = [&](uint32_t k) {
    cols.Row(-1, static_cast<int64_t>(tb.kernels[k].seq), 0, names.Id(tb, tb.kernels[k]), kOnlyB, 0,
             Cause::kNone, 0, 0);
    modules.Row(ta, nullptr, tb, &tb.kernels[k]);
  };
  for (size_t i = 0; i < al.pairs.size(); ++i) {
    const KernelPair& p = al.pairs[i];
    while (ia < al.only_a.size() && al.only_a[ia] < p.a) only_a(al.only_a[ia++]);
    while (ib < al.only_b.size() && al.only_b[ib] < p.b) only_b(al.only_b[ib++]);
    const PairVerdict& v = res.verdicts[i];
    if (res.first_divergence && *res.first_divergence == i) first_row = cols.rows;
    pair_row[i] = cols.rows;
    const Kernel& ka = ta.kernels[p.a];
    const Kernel& kb = tb.kernels[p.b];
    cols.Row(static_cast<int64_t>(ka.seq), static_cast<int64_t>(kb.seq), names.Id(ta, ka), names.Id(tb, kb),
             static_cast<int>(v.status), static_cast<int>(p.method), v.cause, v.score, v.rel_diff);
    modules.Row(ta, &ka, tb, &kb);
  }
  while (ia < al.only_a.size()) only_a(al.only_a[ia++]);
  while (ib < al.only_b.size()) only_b(al.only_b[ib++]);

  w.BeginObject().Key("rank").Int(rd.rank).Key("a");
  Side(ta, w);
  w.Key("b");
  Side(tb, w);
  w.Key("verdict").String(VerdictName(res.verdict));
  w.Key("rtol").Double(res.tolerance.rtol).Key("atol").Double(res.tolerance.atol);
  const DiffCounts& c = res.counts;
  // Keyed by the JSON summary's words, so the page depends on no order.
  w.Key("counts").BeginObject().Key("pairs").Uint(c.pairs).Key("bitwise_equal").Uint(c.bitwise_equal);
  w.Key("within_tolerance").Uint(c.within_tolerance).Key("diverged").Uint(c.diverged);
  w.Key("only_a").Uint(c.only_a).Key("only_b").Uint(c.only_b).EndObject();
  w.Key("methods").BeginArray();
  for (int m = 0; m < kMatchMethodCount; ++m) w.Uint(c.by_method[m]);
  w.EndArray().Key("first").Int(first_row);
  if (res.environment) WriteEnvironmentJson(*res.environment, w);
  if (!ta.records_environment || !tb.records_environment) {
    w.Key("env_note").String(NoEnvironmentNote(ta.records_environment ? tb : ta));
  }
  if (res.first_divergence) {
    const uint32_t i = *res.first_divergence;
    const PairVerdict& v = res.verdicts[i];
    w.Key("card").BeginObject().Key("kind").String(DivergenceKind(v.status));
    w.Key("rel").Double(Finite(v.rel_diff)).Key("score").Double(Finite(v.score));
    w.Key("cause").String(CauseName(v.cause)).Key("method").String(MatchMethodName(al.pairs[i].method));
    w.Key("a");
    KernelInfo(ta, al.pairs[i].a, v.a_buffer, names, w);
    w.Key("b");
    KernelInfo(tb, al.pairs[i].b, v.b_buffer, names, w);
    w.Key("context").Int(opt.context);
    w.Key("affected").BeginArray();
    for (const EnvDifference* e : AffectingFirstDivergence(rd)) {
      w.BeginObject().Key("key").String(e->key).Key("a").String(e->a).Key("b").String(e->b);
      w.Key("effect").String(EffectOf(*e)).EndObject();
    }
    w.EndArray();
    w.Key("origins").BeginArray();
    for (uint32_t o : res.origins.of_first_divergence) w.Int(pair_row[o]);
    w.EndArray();
    // A log of ops names an op, not a launch numtrace could dump: no recipe.
    if (ta.records_launches && tb.records_launches) {
      const DumpCommands dump = BuildDumpCommands(ta, ta.kernels[al.pairs[i].a], tb, tb.kernels[al.pairs[i].b]);
      w.Key("dump").BeginArray().String(dump.capture_a).String(dump.capture_b).String(dump.tensors).EndArray();
    }
    w.EndObject();
  }
  w.Key("nonfinite").BeginObject().Key("a");
  if (res.first_nonfinite_a) KernelInfo(ta, *res.first_nonfinite_a, -1, names, w);
  else w.Null();
  w.Key("b");
  if (res.first_nonfinite_b) KernelInfo(tb, *res.first_nonfinite_b, -1, names, w);
  else w.Null();
  w.EndObject().Key("top").BeginArray();
  int shown = 0;
  for (uint32_t i : res.top_divergences) {
    if (shown++ >= opt.top) break;
    w.Int(pair_row[i]);
  }
  w.EndArray();
  // Origins: each with its score, how many diverged pairs it reaches and
  // which rows (the page highlights them when the origin is selected).
  const Origins& o = res.origins;
  w.Key("origins").BeginObject().Key("count").Uint(o.count).Key("diverged").Uint(o.diverged);
  w.Key("first").Int(o.first ? pair_row[*o.first] : -1).Key("list").BeginArray();
  for (size_t t = 0; t < o.top.size(); ++t) {
    const uint32_t i = o.top[t];
    w.BeginObject().Key("row").Int(pair_row[i]).Key("score").Double(Finite(res.verdicts[i].score));
    w.Key("status").String(PairStatusName(res.verdicts[i].status));
    w.Key("reach").Uint(o.descendants[i]).Key("rows").BeginArray();
    // Highlighting needs no more than this many rows; `reach` stays exact.
    const size_t shown_rows = std::min(o.reach[t].size(), kMaxReachRows);
    for (size_t d = 0; d < shown_rows; ++d) w.Int(pair_row[o.reach[t][d]]);
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  // Roots (judge/roots.h): the page leads with the sentence and lists them.
  const Roots& rt = res.roots;
  w.Key("roots").BeginObject().Key("count").Uint(rt.count).Key("lead").String(RootsSentence(rd));
  w.Key("first").Int(rt.first ? pair_row[*rt.first] : -1).Key("list").BeginArray();
  for (uint32_t i : rt.top) {
    w.BeginObject().Key("row").Int(pair_row[i]).Key("score").Double(Finite(res.verdicts[i].score));
    w.Key("cause").String(CauseName(res.verdicts[i].cause)).Key("reach").Uint(rt.descendants[i]).EndObject();
  }
  w.EndArray().EndObject();
  Warnings(ta, tb, al, w);
  WriteStepsJson(rd, /*strip=*/true, w);
  names.Write(w);
  modules.Write(w);
  HtmlModules(ta, tb, res, pair_row, w);
  w.Key("rows").BeginObject().Key("n").Int(cols.rows);
  for (auto [key, col] : {std::pair{"a", &cols.a}, {"b", &cols.b}, {"an", &cols.an}, {"bn", &cols.bn},
                          {"s", &cols.s}, {"m", &cols.m}, {"c", &cols.c}, {"sc", &cols.sc}, {"r", &cols.r}}) {
    w.Key(key).BeginArray().RawMembers(*col).EndArray();
    col->clear();
    col->shrink_to_fit();
  }
  w.EndObject().EndObject();
}

// Escapes what could end the <script> element or confuse an HTML parser.
// These characters occur only inside JSON strings, so a pass over the whole
// data is exact.
void MakeScriptSafe(std::string_view json, std::string* out) {
  out->reserve(out->size() + json.size() + json.size() / 64);
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    // Most bytes are copied as they are, in runs (not one push_back each).
    if (c != '<' && c != '>' && c != '&' && c != '\xE2') continue;
    out->append(json.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '<': out->append("\\u003c"); continue;
      case '>': out->append("\\u003e"); continue;
      case '&': out->append("\\u0026"); continue;
      default: break;
    }
    if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
        (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out->append(json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
      i += 2;
      plain = i + 1;
      continue;
    }
    out->push_back(c);
  }
  out->append(json.data() + plain, json.size() - plain);
}

}  // namespace

void AppendScriptSafeJsonString(std::string_view s, std::string* out) {
  std::string json;
  AppendJsonString(s, &json);
  MakeScriptSafe(json, out);
}

std::string HtmlReport(const DiffReport& report, const HtmlOptions& opt) {
  std::string data;
  JsonWriter w(&data);
  RolledUp up = RollUpRanks(report);
  w.BeginObject().Key("version").Int(1).Key("a").String(report.path_a).Key("b").String(report.path_b);
  w.Key("verdict").String(VerdictName(up.verdict)).Key("first_rank").Int(up.first_divergence_rank);
  if (const int e = EnvironmentRank(report); e >= 0) {
    w.Key("settings").String(VerdictEnvironmentKeys(*report.ranks[e].result->environment));
  }
  EnumLists(w);
  w.Key("ranks").BeginArray();
  for (const RankDiff& rd : report.ranks) RankData(rd, opt, w);
  w.EndArray().EndObject();

  std::string_view page = HtmlTemplate();
  size_t at = page.find(kHtmlDataMarker);
  std::string html;
  html.reserve(page.size() + data.size() + data.size() / 32);
  html.append(page.substr(0, at));
  MakeScriptSafe(data, &html);
  if (at != std::string_view::npos) html.append(page.substr(at + kHtmlDataMarker.size()));
  return html;
}

}  // namespace numtrace::analyzer
