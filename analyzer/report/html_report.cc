#include "analyzer/report/html_report.h"

#include <cmath>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "analyzer/report/dump_commands.h"
#include "analyzer/report/html_template.h"
#include "common/names/normalize.h"
#include "common/format/jsonl_writer.h"

namespace numtrace::analyzer {
namespace {

// Row kinds beyond PairStatus: kernels that found no partner.
constexpr int kOnlyA = 5, kOnlyB = 6;

void Int(int64_t v, std::string* out) { out->append(std::to_string(v)); }

// Two significant digits are plenty to colour and sort by; -1 stands for an
// infinite difference (JSON has no Infinity).
void Rel(double v, std::string* out) {
  if (v == 0) {
    out->push_back('0');
    return;
  }
  if (!std::isfinite(v)) {
    out->append("-1");
    return;
  }
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), "%.2g", v);
  out->append(buf, n);
}

// Both runs' names, interned together: an index per distinct demangled name.
class NameTable {
 public:
  uint32_t Id(const Trace& t, const Kernel& k) {
    std::string_view full = t.Demangled(k);
    auto [it, added] = ids_.try_emplace(full, static_cast<uint32_t>(ids_.size()));
    if (added) names_.emplace_back(full);
    return it->second;
  }
  void Write(std::string* out) const {
    out->append("\"names\":[");
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString(names_[i], out);
    }
    out->append("],\"labels\":[");
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString(ShortName(names_[i]), out);
    }
    out->push_back(']');
  }

 private:
  // Views into the traces, which outlive the table.
  absl::flat_hash_map<std::string_view, uint32_t> ids_;
  std::vector<std::string_view> names_;
};

void Side(const Trace& t, std::string* out) {
  out->append("{\"path\":");
  AppendJsonString(t.path, out);
  out->append(",\"label\":");
  AppendJsonString(t.label, out);
  out->append(",\"kernels\":");
  Int(static_cast<int64_t>(t.kernels.size()), out);
  out->append(",\"truncated\":");
  out->append(t.truncated ? "true" : "false");
  out->push_back('}');
}

void Stats(const Buffer& b, std::string* out) {
  out->append("{\"arg\":");
  Int(b.arg, out);
  out->append(",\"dtype\":\"");
  out->append(DTypeName(b.dtype));
  out->append("\",\"role\":\"");
  out->append(RoleName(b.role));
  out->append("\",\"bytes\":");
  Int(static_cast<int64_t>(b.bytes), out);
  out->push_back(',');
  AppendStatsFields(b.stats, b.dtype, out);
  out->push_back('}');
}

void KernelInfo(const Trace& t, uint32_t index, int32_t buffer, NameTable& names,
                std::string* out) {
  const Kernel& k = t.kernels[index];
  out->append("{\"seq\":");
  Int(static_cast<int64_t>(k.seq), out);
  out->append(",\"name\":");
  Int(names.Id(t, k), out);
  if (k.step >= 0) {
    out->append(",\"step\":");
    Int(k.step, out);
  }
  if (k.stream != kNoValue) {
    out->append(",\"stream\":");
    Int(static_cast<int64_t>(k.stream), out);
  }
  out->append(",\"grid\":[");
  for (int i = 0; i < 3; ++i) {
    if (i) out->push_back(',');
    Int(k.grid[i], out);
  }
  out->append("],\"block\":[");
  for (int i = 0; i < 3; ++i) {
    if (i) out->push_back(',');
    Int(k.block[i], out);
  }
  out->append("],\"buffers\":");
  Int(k.buffer_count, out);
  if (buffer >= 0 && static_cast<uint32_t>(buffer) < k.buffer_count) {
    out->append(",\"buf\":");
    Stats(t.BuffersOf(k)[buffer], out);
  }
  out->push_back('}');
}

struct Columns {
  std::string a, b, an, bn, s, m, r;
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
  void Row(int64_t seq_a, int64_t seq_b, uint32_t name_a, uint32_t name_b, int status,
           int method, double rel) {
    Seq(&a, &last_a, seq_a);
    Seq(&b, &last_b, seq_b);
    Put(&an, name_a);
    Put(&bn, name_b);
    Put(&s, status);
    Put(&m, method);
    if (!r.empty()) r.push_back(',');
    Rel(rel, &r);
    ++rows;
  }
};

void RankData(const RankDiff& rd, const HtmlOptions& opt, std::string* out) {
  const Trace& ta = *rd.a;
  const Trace& tb = *rd.b;
  const DiffResult& res = *rd.result;
  const Alignment& al = res.alignment;
  NameTable names;
  Columns cols;
  int64_t first_row = -1;
  std::vector<int64_t> pair_row(al.pairs.size());
  size_t ia = 0, ib = 0;
  auto only_a = [&](uint32_t k) {
    cols.Row(static_cast<int64_t>(ta.kernels[k].seq), -1, names.Id(ta, ta.kernels[k]), 0,
             kOnlyA, 0, 0);
  };
  auto only_b = [&](uint32_t k) {
    cols.Row(-1, static_cast<int64_t>(tb.kernels[k].seq), 0, names.Id(tb, tb.kernels[k]),
             kOnlyB, 0, 0);
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
    cols.Row(static_cast<int64_t>(ka.seq), static_cast<int64_t>(kb.seq), names.Id(ta, ka),
             names.Id(tb, kb), static_cast<int>(v.status), static_cast<int>(p.method),
             v.rel_diff);
  }
  while (ia < al.only_a.size()) only_a(al.only_a[ia++]);
  while (ib < al.only_b.size()) only_b(al.only_b[ib++]);

  out->append("{\"rank\":");
  Int(rd.rank, out);
  out->append(",\"a\":");
  Side(ta, out);
  out->append(",\"b\":");
  Side(tb, out);
  out->append(",\"verdict\":\"");
  out->append(VerdictName(res.verdict));
  out->append("\",\"rtol\":");
  AppendJsonDouble(res.tolerance.rtol, out);
  out->append(",\"atol\":");
  AppendJsonDouble(res.tolerance.atol, out);
  const DiffCounts& c = res.counts;
  out->append(",\"counts\":[");
  for (uint64_t v : {c.pairs, c.bitwise_equal, c.within_tolerance, c.diverged, c.only_a, c.only_b}) {
    if (out->back() != '[') out->push_back(',');
    Int(static_cast<int64_t>(v), out);
  }
  out->append("],\"methods\":[");
  for (int m = 0; m < kMatchMethodCount; ++m) {
    if (m) out->push_back(',');
    Int(static_cast<int64_t>(c.by_method[m]), out);
  }
  out->append("],\"first\":");
  Int(first_row, out);
  if (res.first_divergence) {
    uint32_t i = *res.first_divergence;
    const PairVerdict& v = res.verdicts[i];
    out->append(",\"card\":{\"kind\":\"");
    out->append(DivergenceKind(v.status));
    out->append("\",\"rel\":");
    Rel(v.rel_diff, out);
    out->append(",\"method\":\"");
    out->append(MatchMethodName(al.pairs[i].method));
    out->append("\",\"a\":");
    KernelInfo(ta, al.pairs[i].a, v.a_buffer, names, out);
    out->append(",\"b\":");
    KernelInfo(tb, al.pairs[i].b, v.b_buffer, names, out);
    out->append(",\"context\":");
    Int(opt.context, out);
    const DumpCommands dump = BuildDumpCommands(ta, ta.kernels[al.pairs[i].a], tb, tb.kernels[al.pairs[i].b]);
    out->append(",\"dump\":[");
    AppendJsonString(dump.capture_a, out);
    out->push_back(',');
    AppendJsonString(dump.capture_b, out);
    out->push_back(',');
    AppendJsonString(dump.tensors, out);
    out->append("]}");
  }
  out->append(",\"nonfinite\":{\"a\":");
  if (res.first_nonfinite_a) {
    KernelInfo(ta, *res.first_nonfinite_a, -1, names, out);
  } else {
    out->append("null");
  }
  out->append(",\"b\":");
  if (res.first_nonfinite_b) {
    KernelInfo(tb, *res.first_nonfinite_b, -1, names, out);
  } else {
    out->append("null");
  }
  out->append("},\"top\":[");
  int shown = 0;
  for (uint32_t i : res.top_divergences) {
    if (shown >= opt.top) break;
    if (shown++) out->push_back(',');
    Int(pair_row[i], out);
  }
  out->append("],\"warnings\":[");
  bool first = true;
  auto warn = [&](const std::string& w) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(w, out);
  };
  for (const Trace* t : {&ta, &tb}) {
    if (t->truncated) warn(t->path + " is truncated (no footer: the process was cut short)");
    if (t->footer && t->footer->dropped) {
      warn(t->path + " dropped " + std::to_string(t->footer->dropped) + " records");
    }
  }
  for (const std::string& w : al.warnings) warn(w);
  out->append("],");
  names.Write(out);
  out->append(",\"rows\":{\"n\":");
  Int(cols.rows, out);
  for (auto [key, col] : {std::pair{"a", &cols.a}, {"b", &cols.b}, {"an", &cols.an},
                          {"bn", &cols.bn}, {"s", &cols.s}, {"m", &cols.m}, {"r", &cols.r}}) {
    out->append(",\"");
    out->append(key);
    out->append("\":[");
    out->append(*col);
    out->push_back(']');
    col->clear();
    col->shrink_to_fit();
  }
  out->append("}}");
}

// Escapes what could end the <script> element or confuse an HTML parser.
// These characters occur only inside JSON strings, so a pass over the whole
// data is exact.
void MakeScriptSafe(std::string_view json, std::string* out) {
  out->reserve(out->size() + json.size() + json.size() / 64);
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
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
      continue;
    }
    out->push_back(c);
  }
}

}  // namespace

void AppendScriptSafeJsonString(std::string_view s, std::string* out) {
  std::string json;
  AppendJsonString(s, &json);
  MakeScriptSafe(json, out);
}

std::string HtmlReport(const DiffReport& report, const HtmlOptions& opt) {
  std::string data = "{\"version\":1,\"a\":";
  AppendJsonString(report.path_a, &data);
  data.append(",\"b\":");
  AppendJsonString(report.path_b, &data);
  RolledUp up = RollUpRanks(report);
  data.append(",\"verdict\":\"");
  data.append(VerdictName(up.verdict));
  data.append("\",\"first_rank\":");
  Int(up.first_divergence_rank, &data);
  data.append(",\"ranks\":[");
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    if (i) data.push_back(',');
    RankData(report.ranks[i], opt, &data);
  }
  data.append("]}");

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
