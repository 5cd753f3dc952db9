#include "analyzer/report/html_report.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "analyzer/judge/provenance.h"
#include "analyzer/report/capture_warnings.h"
#include "analyzer/report/dump_commands.h"
#include "analyzer/report/environment_report.h"
#include "analyzer/report/html_escape.h"
#include "analyzer/report/html_page.h"
#include "analyzer/report/html_provenance.h"
#include "analyzer/report/html_template.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/roots_report.h"
#include "analyzer/report/steps_report.h"
#include "common/format/json_writer.h"
#include "common/format/jsonl_writer.h"

namespace numtrace::analyzer {
namespace {

// Row kinds: the pair statuses of judge/'s list, then kernels that found no
// partner. The page reads these names from the data ("statuses").
constexpr int kOnlyA = kPairStatusCount, kOnlyB = kPairStatusCount + 1;
constexpr int kRowKinds = kPairStatusCount + 2;

// ---- the row table: binary columns, deflated, base64 ----

// Unsigned LEB128: most values of a column (seq steps, small ids) take one byte.
void Var(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A score or relative difference with two significant digits (plenty to
// colour and sort by) as one ordered code: 0 for 0, 65535 for an infinite or
// undefined value, else 1 + (exponent + 330) * 90 + (mantissa - 10) for
// mantissa 10..99 x 10^(exponent - 1). Codes sort as the values do.
uint64_t ScoreCode(double v) {
  if (v == 0) return 0;
  if (!std::isfinite(v) || v < 0) return 65535;
  int e = static_cast<int>(std::floor(std::log10(v)));
  double m = std::round(v / std::pow(10.0, e - 1));
  if (m >= 100) {
    m = 10;
    ++e;
  } else if (m < 10) {
    --e;
    m = std::round(v / std::pow(10.0, e - 1));
  }
  e = std::clamp(e, -330, 308);
  return 1 + static_cast<uint64_t>(e + 330) * 90 + static_cast<uint64_t>(m - 10);
}

// zlib's deflate (RFC 1950), what the browser's DecompressionStream("deflate")
// reads; returned as base64 for a JSON string.
std::string DeflateBase64(std::string_view raw) {
  uLongf size = compressBound(raw.size());
  std::string packed(size, '\0');
  // Level 1: zlib's default (6) took 3% of a 100k-op diff's CPU time for a
  // file 4% smaller (0.62 against 0.65 MB).
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                raw.size(), Z_BEST_SPEED) != Z_OK) {
    size = 0;  // cannot happen with compressBound's size; the page then shows no rows
  }
  packed.resize(size);
  return absl::Base64Escape(packed);
}

// Both runs' names, interned together: an index per distinct display name,
// with its label (KernelLabel, as the summary and the terminal name it).
class NameTable {
 public:
  uint32_t Id(const Trace& t, const Kernel& k) {
    const std::string_view full = t.DisplayName(k);
    auto [it, added] = ids_.try_emplace(full, static_cast<uint32_t>(ids_.size()));
    if (added) {
      names_.emplace_back(full);
      labels_.push_back(KernelLabel(t, k));
    }
    return it->second;
  }
  std::string_view Full(uint32_t id) const { return names_[id]; }
  void Write(JsonWriter& w) const {
    w.Key("names").BeginArray();
    for (std::string_view n : names_) w.String(n);
    w.EndArray().Key("labels").BeginArray();
    for (const std::string& l : labels_) w.String(l);
    w.EndArray();
  }

 private:
  // Views into the traces, which outlive the table.
  absl::flat_hash_map<std::string_view, uint32_t> ids_;
  std::vector<std::string_view> names_;
  std::vector<std::string> labels_;
};

// The table's columns, in the order the page reads them (kColumnNames).
enum Column { kA, kB, kAName, kBName, kKind, kScore, kRel, kScope, kWhere, kColumns };
constexpr std::string_view kColumnNames[kColumns] = {"a", "b", "an", "bn", "kind", "score", "rel", "scope", "where"};

struct Columns {
  std::string col[kColumns];
  int64_t last_a = -1, last_b = -1;
  int64_t rows = 0;

  // Seqs are written as the step from the previous present seq (mostly 1);
  // 0 means "absent on this side" (seqs on one side are distinct, increasing).
  static void Seq(std::string* col, int64_t* last, int64_t seq) {
    if (seq < 0) {
      col->push_back(0);
      return;
    }
    Var(static_cast<uint64_t>(seq - *last), col);
    *last = seq;
  }
  // Names: B's is written as 0 when it is A's (most pairs), else id + 1.
  void Row(int64_t seq_a, int64_t seq_b, uint32_t name_a, uint32_t name_b, int kind, int method, Cause cause,
           double score, double rel, HtmlModuleColumn::Ids mod) {
    Seq(&col[kA], &last_a, seq_a);
    Seq(&col[kB], &last_b, seq_b);
    Var(name_a, &col[kAName]);
    Var(seq_a >= 0 && seq_b >= 0 && name_a == name_b ? 0 : name_b + 1, &col[kBName]);
    Var(static_cast<uint64_t>(kind + kRowKinds * (method + kMatchMethodCount * static_cast<int>(cause))),
        &col[kKind]);
    Var(ScoreCode(score), &col[kScore]);
    Var(ScoreCode(rel), &col[kRel]);
    Var(static_cast<uint64_t>(mod.scope + 1), &col[kScope]);
    Var(static_cast<uint64_t>(mod.where + 1), &col[kWhere]);
    ++rows;
  }
  void Write(JsonWriter& w) {
    std::string all;
    w.Key("n").Int(rows).Key("columns").BeginArray();
    for (int c = 0; c < kColumns; ++c) w.String(kColumnNames[c]);
    w.EndArray().Key("lengths").BeginArray();
    for (int c = 0; c < kColumns; ++c) {
      w.Uint(col[c].size());
      all += col[c];
      col[c].clear();
      col[c].shrink_to_fit();
    }
    w.EndArray().Key("data").String(DeflateBase64(all));
  }
};

// One rank's rows in launch order: pairs with the unmatched kernels of each
// side between them. `pair_row` maps a pair index to its row.
struct RankRows {
  NameTable names;
  HtmlModuleColumn modules;
  Columns cols;
  std::vector<int64_t> pair_row;
  int64_t first_row = -1;
};

void BuildRows(const RankDiff& rd, RankRows* out) {
  const Trace& ta = *rd.a;
  const Trace& tb = *rd.b;
  const DiffResult& res = *rd.result;
  const Alignment& al = res.alignment;
  RankRows& r = *out;
  r.pair_row.resize(al.pairs.size());
  for (std::string& c : r.cols.col) c.reserve(al.pairs.size() + al.only_a.size() + al.only_b.size());
  auto only_a = [&](uint32_t k) {
    r.cols.Row(static_cast<int64_t>(ta.kernels[k].seq), -1, r.names.Id(ta, ta.kernels[k]), 0, kOnlyA, 0, Cause::kNone,
               0, 0, r.modules.Row(ta, &ta.kernels[k], tb, nullptr));
  };
  auto only_b = [&](uint32_t k) {
    r.cols.Row(-1, static_cast<int64_t>(tb.kernels[k].seq), 0, r.names.Id(tb, tb.kernels[k]), kOnlyB, 0, Cause::kNone,
               0, 0, r.modules.Row(ta, nullptr, tb, &tb.kernels[k]));
  };
  size_t ia = 0, ib = 0;
  for (size_t i = 0; i < al.pairs.size(); ++i) {
    const KernelPair& p = al.pairs[i];
    while (ia < al.only_a.size() && al.only_a[ia] < p.a) only_a(al.only_a[ia++]);
    while (ib < al.only_b.size() && al.only_b[ib] < p.b) only_b(al.only_b[ib++]);
    const PairVerdict& v = res.verdicts[i];
    if (res.first_divergence && *res.first_divergence == i) r.first_row = r.cols.rows;
    r.pair_row[i] = r.cols.rows;
    const Kernel& ka = ta.kernels[p.a];
    const Kernel& kb = tb.kernels[p.b];
    r.cols.Row(static_cast<int64_t>(ka.seq), static_cast<int64_t>(kb.seq), r.names.Id(ta, ka), r.names.Id(tb, kb),
               static_cast<int>(v.status), static_cast<int>(p.method), v.cause, v.score, v.rel_diff,
               r.modules.Row(ta, &ka, tb, &kb));
  }
  while (ia < al.only_a.size()) only_a(al.only_a[ia++]);
  while (ib < al.only_b.size()) only_b(al.only_b[ib++]);
}

// The row table of one rank ("ranks"[k] of the table block).
void WriteRankTable(const RankDiff& rd, const HtmlOptions& opt, RankRows& r, JsonWriter& w) {
  const DiffResult& res = *rd.result;
  w.BeginObject().Key("rank").Int(rd.rank).Key("first").Int(r.first_row).Key("context").Int(opt.context);
  r.names.Write(w);
  r.modules.Write(w);
  r.cols.Write(w);
  // What each origin reaches, as a bitset over rows (deflated): bounded by
  // rows / 8 bytes an origin however far a difference flows.
  w.Key("reach").BeginArray();
  const size_t bytes = static_cast<size_t>((r.cols.rows + 7) / 8);
  for (size_t t = 0; t < res.origins.top.size() && t < res.origins.reach.size(); ++t) {
    std::string bits(bytes, '\0');
    for (uint32_t p : res.origins.reach[t]) {
      const int64_t row = r.pair_row[p];
      bits[static_cast<size_t>(row / 8)] |= static_cast<char>(1 << (row % 8));
    }
    w.BeginObject().Key("row").Int(r.pair_row[res.origins.top[t]]).Key("bits").String(DeflateBase64(bits));
    w.EndObject();
  }
  w.EndArray();
  WriteStepsJson(rd, /*strip=*/true, w);
  w.EndObject();
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
  w.Key("methods").BeginArray();
  for (int m = 0; m < kMatchMethodCount; ++m) w.String(MatchMethodName(static_cast<MatchMethod>(m)));
  w.EndArray();
  w.Key("causes").BeginArray();
  for (std::string_view n : kCauseNames) w.String(n);
  w.EndArray();
}

// ---- the summary as markup (readable without JavaScript) ----

class Markup {
 public:
  explicit Markup(std::string* out) : out_(out) {}
  Markup& Raw(std::string_view s) {
    out_->append(s);
    return *this;
  }
  Markup& Text(std::string_view s) {
    AppendHtmlEscaped(s, out_);
    return *this;
  }
  Markup& Num(uint64_t v) { return Raw(std::to_string(v)); }
  // A card's element: `id` only on the rank shown first (ids are unique; the
  // page moves them when another rank is picked), `data-id` on every rank's.
  Markup& Id(std::string_view id, bool shown) {
    Raw(" data-id=\"").Raw(id).Raw("\"");
    if (shown) Raw(" id=\"").Raw(id).Raw("\"");
    return *this;
  }
  // Opens a card: <div class="card" id=card><h2>title <span>(note)</span></h2>
  // <div id=body>; the caller closes both divs.
  Markup& Card(std::string_view card, std::string_view title, std::string_view note, std::string_view body,
               bool shown) {
    Raw("<div class=\"card\"").Id(card, shown).Raw("><h2>").Raw(title);
    if (!note.empty()) Raw(" <span class=\"note\">(").Raw(note).Raw(")</span>");
    return Raw("</h2><div").Id(body, shown).Raw(">");
  }

 private:
  std::string* out_;
};

std::string Rel(double v) {
  if (!std::isfinite(v)) return "inf";
  if (v == 0) return "0";
  char buf[32];
  if (v >= 1e-3 && v < 1e4) {
    // Two significant digits written plainly: 150, 0.0016.
    std::snprintf(buf, sizeof(buf), "%.2g", v);
    std::snprintf(buf, sizeof(buf), "%.10g", std::strtod(buf, nullptr));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1e", v);
  }
  return buf;
}

// "row 12 A#40 name" as a link the page turns into a jump (data-row) or an
// origin selection (data-origin).
void RowLink(const RankDiff& rd, uint32_t pair, int64_t row, std::string_view attr, Markup& m) {
  const Kernel& ka = rd.a->kernels[rd.result->alignment.pairs[pair].a];
  m.Raw("<a class=\"jump\" ").Raw(attr).Raw("=\"").Raw(std::to_string(row)).Raw("\">row ").Raw(std::to_string(row));
  m.Raw(" A#").Num(ka.seq).Raw(" ").Text(KernelLabel(*rd.a, ka)).Raw("</a>");
}

std::string KernelMeta(const Kernel& k) {
  std::string s;
  if (k.step >= 0) s += "step " + std::to_string(k.step) + ", ";
  if (k.stream != kNoValue) s += "stream " + std::to_string(k.stream) + ", ";
  s += "grid " + std::to_string(k.grid[0]) + "x" + std::to_string(k.grid[1]) + "x" + std::to_string(k.grid[2]);
  s += ", block " + std::to_string(k.block[0]) + "x" + std::to_string(k.block[1]) + "x" + std::to_string(k.block[2]);
  return s + ", " + std::to_string(k.buffer_count) + " buffers";
}

void NameBlock(const Trace& t, const Kernel& k, std::string_view head, Markup& m) {
  const std::string_view full = t.DisplayName(k);
  m.Raw("<div><div class=\"muted\">").Text(head).Raw("</div><div class=\"kname mono\" title=\"").Text(full);
  m.Raw("\">").Text(KernelLabel(t, k)).Raw("</div><details><summary>full name</summary><div class=\"full mono\">");
  m.Text(full).Raw("</div></details></div>");
}

std::string KernelWhere(const PairProvenance& p, bool side_a) {
  return ProvenanceLabel(side_a ? p.a_scope : p.b_scope, side_a ? p.a_op : p.b_op, p.phase,
                         side_a ? p.a_src : p.b_src);
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.7g", v);
  return buf;
}

// The diverging buffer's statistics side by side.
void StatsTable(const Buffer* a, const Buffer* b, Markup& m) {
  if (a == nullptr && b == nullptr) return;
  // Folded: the card stays short enough for roots and origins to show
  // without scrolling.
  std::string rows;
  Markup t(&rows);
  int differ = 0;
  auto row = [&](std::string_view key, auto get) {
    const std::string va = a ? get(*a) : "-", vb = b ? get(*b) : "-";
    differ += va != vb;
    const char* cls = va != vb ? " class=\"differs\"" : "";
    t.Raw("<tr><td>").Raw(key).Raw("</td><td").Raw(cls).Raw(">").Text(va).Raw("</td><td").Raw(cls).Raw(">");
    t.Text(vb).Raw("</td></tr>");
  };
  auto u = [](uint64_t v) { return std::to_string(v); };
  row("arg", [&](const Buffer& x) { return u(x.arg); });
  row("dtype", [](const Buffer& x) { return std::string(DTypeName(x.dtype)); });
  row("role", [](const Buffer& x) { return std::string(RoleName(x.role)); });
  row("bytes", [&](const Buffer& x) { return u(x.bytes); });
  row("n", [&](const Buffer& x) { return u(x.stats.n); });
  row("nan", [&](const Buffer& x) { return u(x.stats.nan); });
  row("inf", [&](const Buffer& x) { return u(x.stats.inf); });
  row("ninf", [&](const Buffer& x) { return u(x.stats.ninf); });
  row("zero", [&](const Buffer& x) { return u(x.stats.zero); });
  row("min", [](const Buffer& x) { return x.stats.has_range ? Number(x.stats.min) : std::string("-"); });
  row("max", [](const Buffer& x) { return x.stats.has_range ? Number(x.stats.max) : std::string("-"); });
  row("sum", [](const Buffer& x) { return Number(x.stats.sum); });
  row("l1", [](const Buffer& x) { return Number(x.stats.l1); });
  row("l2", [](const Buffer& x) { return Number(x.stats.l2); });
  row("hash", [](const Buffer& x) {
    std::string h;
    AppendHash16(x.stats.hash, &h);
    return h.substr(1, h.size() - 2);  // without the JSON quotes
  });
  m.Raw("<details><summary>the diverging buffer's statistics, A and B (").Raw(std::to_string(differ));
  m.Raw(" differ)</summary><table class=\"kv mono\"><tr><th>diverging buffer</th><th>A</th><th>B</th></tr>");
  m.Raw(rows).Raw("</table></details>");
}

const Buffer* BufferAt(const Trace& t, const Kernel& k, int32_t i) {
  return i >= 0 && static_cast<uint32_t>(i) < k.buffer_count ? &t.BuffersOf(k)[i] : nullptr;
}

void FirstCard(const RankDiff& rd, const RankRows& r, bool shown, Markup& m) {
  const DiffResult& res = *rd.result;
  m.Card("first", "First divergence", "", "firstbody", shown);
  if (!res.first_divergence) {
    // Watch traces hold digests, not kernel records: no pair was compared
    // here, and the Steps panel says whether they differ.
    const bool digests_only = res.counts.pairs == 0 && res.steps && res.steps->compared != 0;
    m.Raw("<div class=\"muted\">")
        .Raw(res.counts.diverged ? ""
             : digests_only      ? "No kernel records compared: the steps were compared by digest (Steps)."
                                 : "No pair diverged.")
        .Raw("</div></div></div>");
    return;
  }
  const uint32_t i = *res.first_divergence;
  const KernelPair& p = res.alignment.pairs[i];
  const PairVerdict& v = res.verdicts[i];
  const Kernel& ka = rd.a->kernels[p.a];
  const Kernel& kb = rd.b->kernels[p.b];
  m.Raw("<div><b>").Text(DivergenceKind(v.status)).Raw("</b><span>  score ").Raw(Rel(v.score));
  m.Raw(", rel diff ").Raw(Rel(v.rel_diff)).Raw(", cause ").Text(CauseName(v.cause)).Raw(", matched ");
  m.Text(MatchMethodName(p.method)).Raw(", row ").Raw(std::to_string(r.first_row)).Raw(" </span>");
  m.Raw("<a class=\"jump\" data-row=\"").Raw(std::to_string(r.first_row)).Raw("\">show in table</a></div>");
  for (const EnvDifference* e : AffectingFirstDivergence(rd)) {
    m.Raw("<div class=\"warn\">affected by ").Text(e->key).Raw(" (A '").Text(e->a).Raw("', B '").Text(e->b);
    m.Raw("'): ").Text(EffectOf(*e)).Raw("</div>");
  }
  const PairProvenance prov_a = ProvenanceOf(*rd.a, &ka, *rd.b, nullptr);
  const PairProvenance prov_b = ProvenanceOf(*rd.a, nullptr, *rd.b, &kb);
  const std::string wa = KernelWhere(prov_a, true), wb = KernelWhere(prov_b, false);
  if (!wa.empty() || !wb.empty()) {
    m.Raw("<div>in <b class=\"mono\">").Text(wa.empty() ? wb : wa).Raw("</b>");
    if (!wa.empty() && !wb.empty() && wa != wb) m.Raw("<span class=\"mono\">  |  B: ").Text(wb).Raw("</span>");
    m.Raw("</div>");
  }
  const std::vector<uint32_t>& from = res.origins.of_first_divergence;
  if (v.cause == Cause::kInherited && !from.empty()) {
    m.Raw("<div class=\"muted\">inherited from origin: ");
    RowLink(rd, from[0], r.pair_row[from[0]], "data-origin", m);
    if (from.size() > 1) m.Raw("<span> and ").Num(from.size() - 1).Raw(" more</span>");
    m.Raw("</div>");
  }
  m.Raw("<div class=\"cardgrid\"><div><div class=\"row2\">");
  NameBlock(*rd.a, ka, "A seq " + std::to_string(ka.seq) + " - " + KernelMeta(ka), m);
  NameBlock(*rd.b, kb, "B seq " + std::to_string(kb.seq) + " - " + KernelMeta(kb), m);
  m.Raw("</div>");
  StatsTable(BufferAt(*rd.a, ka, v.a_buffer), BufferAt(*rd.b, kb, v.b_buffer), m);
  // The page lists the pairs just before it from the row table.
  m.Raw("</div><div><div class=\"muted\">the pairs before it (and the divergence):</div>");
  m.Raw("<ul class=\"ctx mono\" data-context=\"").Raw(std::to_string(r.first_row)).Raw("\"></ul></div></div>");
  // A log of ops names an op, not a launch numtrace could dump: no recipe.
  if (rd.a->records_launches && rd.b->records_launches) {
    const DumpCommands dump = BuildDumpCommands(*rd.a, ka, *rd.b, kb);
    m.Raw("<div class=\"muted\">element view: re-capture both sides with a dump of this launch, then compare:</div>");
    m.Raw("<pre class=\"mono dumpcmd\">").Text(dump.capture_a).Raw("\n").Text(dump.capture_b).Raw("\n");
    m.Text(dump.tensors).Raw("</pre>");
  }
  m.Raw("</div></div>");
}

void Header(const RankDiff& rd, Markup& m) {
  const DiffResult& res = *rd.result;
  m.Raw("<div class=\"mono muted\">");
  for (const Trace* t : {rd.a, rd.b}) {
    m.Raw("<span>").Raw(t == rd.a ? "A: " : "B: ").Text(t->path).Raw("  (").Text(t->label).Raw(", ");
    m.Num(t->kernels.size()).Raw(" kernels)</span>").Raw(t == rd.a ? "<br>" : "");
  }
  m.Raw("</div><div class=\"counts\">");
  const DiffCounts& c = res.counts;
  const std::pair<const char*, uint64_t> items[] = {{"pairs", c.pairs},
                                                    {"bitwise equal", c.bitwise_equal},
                                                    {"within tolerance", c.within_tolerance},
                                                    {"diverged", c.diverged},
                                                    {"only in A", c.only_a},
                                                    {"only in B", c.only_b}};
  for (const auto& [k, n] : items) m.Raw("<span>").Raw(k).Raw(" <b>").Num(n).Raw("</b></span>");
  m.Raw("<span class=\"muted\">matched: ");
  for (int i = 0; i < kMatchMethodCount; ++i) {
    m.Raw(i ? ", " : "").Text(MatchMethodName(static_cast<MatchMethod>(i))).Raw(" ").Num(c.by_method[i]);
  }
  m.Raw("</span><span class=\"muted\">tolerance: calibrated per dtype and statistic, rtol floor ");
  m.Raw(Number(res.tolerance.rtol)).Raw(", atol ").Raw(Number(res.tolerance.atol)).Raw("</span></div>");
  m.Raw("<div class=\"warn\">");
  if (res.verdict == Verdict::kDiverged && res.environment) {
    const std::string keys = VerdictEnvironmentKeys(*res.environment);
    if (!keys.empty()) m.Raw("<div>settings differ: ").Text(keys).Raw("</div>");
  }
  for (const Trace* t : {rd.a, rd.b}) {
    const std::string side = t == rd.a ? "A" : "B";
    const SideHealth h = HealthOf(*t);
    auto warn = [&](const std::string& s) { m.Raw("<div>warning: ").Text(s).Raw("</div>"); };
    if (h.truncated) warn(t->path + " is truncated (cut short: no footer, the process was killed)");
    if (h.dropped) warn(t->path + ": records dropped (" + std::to_string(h.dropped) + ")");
    if (h.unmeasured) warn(std::to_string(h.unmeasured) + " kernels ran unmeasured in " + side);
    if (h.undigested) warn(std::to_string(h.undigested) + " launches not digested in " + side);
    for (const std::string& s : CaptureWarnings(*t, side)) warn(s);
  }
  for (const std::string& s : res.alignment.warnings) m.Raw("<div>warning: ").Text(s).Raw("</div>");
  for (const Trace* t : {rd.a, rd.b}) {
    const std::string counters = CountersText(*t);
    if (!counters.empty()) m.Raw("<div class=\"muted\">").Raw(t == rd.a ? "A" : "B").Raw(" counters: ").Text(counters).Raw("</div>");
  }
  m.Raw("</div>");
}

void EnvCard(const RankDiff& rd, bool shown, Markup& m) {
  const std::optional<EnvironmentDiff>& e = rd.result->environment;
  const Trace* without = !rd.a->records_environment ? rd.a : !rd.b->records_environment ? rd.b : nullptr;
  if (!e && without == nullptr) return;
  m.Card("envcard", "Environment",
         "what else decides the numbers: settings, libraries, GPU; the ones that change numbers first", "env", shown);
  if (!e) {
    m.Raw("<div class=\"muted\">").Text(NoEnvironmentNote(*without)).Raw("</div></div></div>");
    return;
  }
  m.Raw("<div class=\"muted\">").Num(e->differs.size()).Raw(" differ, ").Num(e->same).Raw(" same");
  for (const auto* keys : {&e->only_a, &e->only_b}) {
    if (keys->empty()) continue;
    m.Raw(keys == &e->only_a ? ", only in A: " : ", only in B: ");
    for (size_t i = 0; i < keys->size(); ++i) m.Raw(i ? ", " : "").Text((*keys)[i]);
  }
  m.Raw("</div>");
  if (!e->differs.empty()) {
    m.Raw("<table class=\"kv\"><tr><th>key</th><th>A</th><th>B</th><th>effect</th></tr>");
    for (const EnvDifference& d : e->differs) {
      m.Raw("<tr><td class=\"mono").Raw(d.relevant() ? " warn" : "").Raw("\">").Text(d.key);
      m.Raw("</td><td class=\"mono\">").Text(d.a).Raw("</td><td class=\"mono\">").Text(d.b).Raw("</td><td>");
      m.Text(EffectOf(d)).Raw("</td></tr>");
    }
    m.Raw("</table>");
  }
  m.Raw("</div></div>");
}

void RootsCard(const RankDiff& rd, const RankRows& r, bool shown, Markup& m) {
  const Roots& o = rd.result->roots;
  m.Card("rootscard", "Where the divergence beyond tolerance starts",
         "roots: diverged pairs whose inputs were all within tolerance", "roots", shown);
  if (!o.count) {
    m.Raw("<div class=\"muted\">No divergence beyond tolerance.</div></div></div>");
    return;
  }
  m.Raw("<b>").Text(RootsSentence(rd)).Raw("</b><ul class=\"ctx mono origins\">");
  for (uint32_t i : o.top) {
    const PairVerdict& v = rd.result->verdicts[i];
    m.Raw("<li><span class=\"st-values lead\">").Text(CauseName(v.cause)).Raw(", score ").Raw(Rel(v.score));
    m.Raw(", ").Num(o.descendants[i]).Raw(" descend</span>");
    RowLink(rd, i, r.pair_row[i], "data-row", m);
    m.Raw("</li>");
  }
  m.Raw("</ul></div></div>");
}

void OriginsCard(const RankDiff& rd, const RankRows& r, bool shown, Markup& m) {
  const Origins& o = rd.result->origins;
  m.Card("originscard", "Origins",
         "kernels whose inputs were equal in both runs but whose outputs differ: where differences are born; click "
         "one to highlight the divergences it reaches",
         "origins", shown);
  if (!o.count) {
    m.Raw("<div class=\"muted\">No kernel introduced a difference.</div></div></div>");
    return;
  }
  m.Raw("<div class=\"muted\">").Num(o.count).Raw(" origins, ").Num(o.diverged).Raw(" beyond tolerance");
  if (o.first) {
    m.Raw("; the runs part first at ");
    RowLink(rd, *o.first, r.pair_row[*o.first], "data-row", m);
  }
  m.Raw("</div><ul class=\"ctx mono origins\">");
  for (uint32_t i : o.top) {
    const PairVerdict& v = rd.result->verdicts[i];
    const int64_t row = r.pair_row[i];
    m.Raw("<li data-row=\"").Raw(std::to_string(row)).Raw("\"><span class=\"lead st-");
    m.Text(PairStatusName(v.status)).Raw("\">score ").Raw(Rel(v.score)).Raw(", reaches ");
    m.Num(o.descendants[i]).Raw("</span>");
    RowLink(rd, i, row, "data-origin", m);
    const Kernel& ka = rd.a->kernels[rd.result->alignment.pairs[i].a];
    const std::string where = KernelWhere(ProvenanceOf(*rd.a, &ka, *rd.b, nullptr), true);
    if (!where.empty()) m.Raw("<span> in ").Text(where).Raw("</span>");
    m.Raw("</li>");
  }
  m.Raw("</ul></div></div>");
}

void ModulesCard(const RankDiff& rd, const RankRows& r, bool shown, Markup& m) {
  const std::vector<ModuleRollup> modules = RollUpModules(*rd.a, *rd.b, *rd.result);
  if (modules.empty()) return;
  m.Card("modulescard", "Modules",
         "where in the model: pairs and divergences per module, from the kernels' scope; click a module to filter "
         "the table",
         "modules", shown);
  // A model has hundreds of modules: the list scrolls in its own box.
  m.Raw("<div class=\"scrollbox\"><table class=\"kv mono\"><tr><th>module</th><th>pairs</th><th>diverged</th>"
        "<th>first divergence</th></tr>");
  for (const ModuleRollup& mod : modules) {
    m.Raw("<tr><td><a class=\"jump\" data-module=\"").Text(mod.scope).Raw("\">");
    m.Text(mod.scope.empty() ? "(root)" : mod.scope).Raw("</a></td><td>").Num(mod.pairs).Raw("</td><td");
    m.Raw(mod.diverged ? " class=\"st-values\"" : "").Raw(">").Num(mod.diverged).Raw("</td><td>");
    if (mod.first_divergence) RowLink(rd, *mod.first_divergence, r.pair_row[*mod.first_divergence], "data-row", m);
    m.Raw("</td></tr>");
  }
  m.Raw("</table></div></div></div>");
}

void NonfiniteAndTop(const RankDiff& rd, const RankRows& r, const HtmlOptions& opt, Markup& m) {
  const DiffResult& res = *rd.result;
  m.Raw("<div class=\"row2\"><div class=\"card\"><h2>First NaN / Inf</h2><div>");
  for (const Trace* t : {rd.a, rd.b}) {
    const std::optional<uint32_t>& k = t == rd.a ? res.first_nonfinite_a : res.first_nonfinite_b;
    const char* side = t == rd.a ? "A" : "B";
    if (!k) {
      // Watch mode: the first step whose digests saw a NaN/Inf.
      const std::optional<StepNonfinite>* in_step =
          res.steps ? &(t == rd.a ? res.steps->nonfinite_a : res.steps->nonfinite_b) : nullptr;
      if (in_step != nullptr && in_step->has_value()) {
        m.Raw("<div class=\"mono\">run ").Raw(side).Raw(": step ").Raw(std::to_string((*in_step)->step)).Raw(", launch ");
        m.Num((*in_step)->index).Raw(" ").Text(t->strings.View((*in_step)->name)).Raw(" (by digest)</div>");
      } else {
        m.Raw("<div class=\"muted\">run ").Raw(side).Raw(": none</div>");
      }
      continue;
    }
    const Kernel& kk = t->kernels[*k];
    const PairProvenance p = t == rd.a ? ProvenanceOf(*t, &kk, *t, nullptr) : ProvenanceOf(*t, nullptr, *t, &kk);
    const std::string where = KernelWhere(p, t == rd.a);
    NameBlock(*t, kk, std::string("run ") + side + ": seq " + std::to_string(kk.seq) +
                          (where.empty() ? "" : " in " + where) + " - " + KernelMeta(kk), m);
  }
  m.Raw("</div></div><div class=\"card\"><h2>Largest divergences <span class=\"note\">(by score)</span></h2><div>");
  if (res.top_divergences.empty()) m.Raw("<div class=\"muted\">none</div>");
  m.Raw("<ul class=\"ctx mono\">");
  int shown = 0;
  for (uint32_t i : res.top_divergences) {
    if (shown++ >= opt.top) break;
    const PairVerdict& v = res.verdicts[i];
    m.Raw("<li><span class=\"lead st-").Text(PairStatusName(v.status)).Raw("\">").Text(DivergenceKind(v.status));
    m.Raw(" ").Raw(Rel(v.score)).Raw("</span>");
    RowLink(rd, i, r.pair_row[i], "data-row", m);
    m.Raw("</li>");
  }
  m.Raw("</ul></div></div></div>");
}

void RankSection(const RankDiff& rd, const RankRows& r, const HtmlOptions& opt, bool shown, Markup& m) {
  m.Raw("<section class=\"rank\" data-rank=\"").Raw(std::to_string(rd.rank)).Raw("\"").Raw(shown ? "" : " hidden");
  m.Raw("><div class=\"card\">");
  Header(rd, m);
  m.Raw("</div>");
  EnvCard(rd, shown, m);
  FirstCard(rd, r, shown, m);
  RootsCard(rd, r, shown, m);
  OriginsCard(rd, r, shown, m);
  // Watch mode's per-step strip: drawn by the page from the row table's "steps".
  m.Raw("<div class=\"card\"").Id("stepscard", shown).Raw(" hidden><h2>Steps <span class=\"note\">(watch mode: one "
        "cell per compared step; grey: equal, red: digests differ, black: kernel sequences differ, purple: a "
        "NaN/Inf)</span></h2><div").Id("steps", shown).Raw("></div></div>");
  ModulesCard(rd, r, shown, m);
  NonfiniteAndTop(rd, r, opt, m);
  m.Raw("</section>");
}

}  // namespace

std::string HtmlReport(const DiffReport& report, const HtmlOptions& opt) {
  const RolledUp up = RollUpRanks(report);
  const size_t start = static_cast<size_t>(std::max(0, up.first_divergence_rank));
  std::string table, summary_markup;
  JsonWriter w(&table);
  Markup m(&summary_markup);
  w.BeginObject().Key("format").String("numtrace-html-rows").Key("version").Int(1);
  EnumLists(w);
  w.Key("ranks").BeginArray();
  for (size_t k = 0; k < report.ranks.size(); ++k) {
    RankRows rows;
    BuildRows(report.ranks[k], &rows);
    RankSection(report.ranks[k], rows, opt, k == start, m);
    WriteRankTable(report.ranks[k], opt, rows, w);
  }
  w.EndArray().EndObject();

  std::string head;
  AppendVerdictBadge(VerdictName(up.verdict), up.verdict, &head);
  std::vector<std::pair<std::string, std::string>> picks;
  for (size_t k = 0; k < report.ranks.size(); ++k) {
    std::string v(VerdictName(report.ranks[k].result->verdict));
    std::replace(v.begin(), v.end(), '_', ' ');
    picks.emplace_back(std::to_string(k), "rank " + std::to_string(report.ranks[k].rank) + ": " + v);
  }
  AppendRankPicker(picks, start, &head);

  std::string summary_json;
  AppendScriptSafe(JsonSummary(report), &summary_json);
  std::string table_json;
  AppendScriptSafe(table, &table_json);
  table.clear();
  table.shrink_to_fit();

  return FillTemplate(HtmlTemplate(), {{kHtmlHeadMarker, &head},
                                        {kHtmlSummaryMarker, &summary_markup},
                                        {kHtmlSummaryDataMarker, &summary_json},
                                        {kHtmlRowsDataMarker, &table_json}});
}

}  // namespace numtrace::analyzer
