#include "analyzer/report/cross_rank_report.h"

#include <cstdio>

#include "analyzer/report/html_escape.h"
#include "analyzer/report/terminal_text.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {
namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

void Nonfinite(const std::optional<NonfiniteAt>& n, JsonWriter& w) {
  if (!n) {
    w.Null();
    return;
  }
  w.BeginObject().Key("rank").Int(n->rank).Key("seq").Uint(n->seq).Key("ref_seq").Uint(n->order);
  w.Key("arg").Uint(n->arg).Key("name").String(n->name).EndObject();
}

}  // namespace

std::string CrossRankVerdict(const CrossRankResult& r) {
  return r.mismatches.empty() ? "consistent" : "replicas_differ";
}

std::string CrossRankTerminal(const CrossRankResult& r, const std::string& dir, int top) {
  // The reference is the first rank present, not necessarily rank 0.
  const std::string ref = r.ranks.empty() ? std::string("-") : std::to_string(r.ranks[0].rank);
  std::string out = "numtrace-diff --across-ranks " + TerminalSafe(dir) + ": " + Num(r.ranks.size()) + " ranks, rank " + ref +
                    " as reference\n";
  char line[320];
  std::snprintf(line, sizeof line, "%-5s %8s %8s %10s %10s %16s  %s\n", "rank", "kernels", "shared",
                "out equal", "out differ", "inputs eq/out ne", "first NaN/Inf");
  out += line;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankRollup& k = r.ranks[i];
    std::string nf = k.first_nonfinite ? "seq " + Num(k.first_nonfinite->seq) + " " + TerminalSafe(k.first_nonfinite->name.substr(0, 60)) : "-";
    if (i == 0) {
      std::snprintf(line, sizeof line, "%-5lld %8llu %8s %10s %10s %16s  %s%s\n", static_cast<long long>(k.rank),
                    static_cast<unsigned long long>(k.kernels), "ref", "-", "-", "-", nf.c_str(),
                    k.truncated ? "  (TRUNCATED)" : "");
    } else {
      std::snprintf(line, sizeof line, "%-5lld %8llu %8llu %10llu %10llu %16llu  %s%s\n",
                    static_cast<long long>(k.rank), static_cast<unsigned long long>(k.kernels),
                    static_cast<unsigned long long>(k.shared), static_cast<unsigned long long>(k.outputs_equal),
                    static_cast<unsigned long long>(k.outputs_differ),
                    static_cast<unsigned long long>(k.inputs_equal_outputs_differ), nf.c_str(),
                    k.truncated ? "  (TRUNCATED)" : "");
    }
    out += line;
  }
  if (r.mismatches.empty()) {
    out += "replicas agree: no kernel has inputs bitwise equal across ranks and outputs that differ\n";
  } else {
    out += Num(r.mismatches.size()) +
           " kernels with inputs bitwise equal to rank " + ref + "'s but different outputs (replicas must agree):\n";
    int shown = 0;
    for (const ReplicaMismatch& m : r.mismatches) {
      if (shown++ >= top) {
        out += "  ... " + Num(r.mismatches.size() - top) + " more (--top, or the JSON)\n";
        break;
      }
      out += "  rank " + std::to_string(m.rank) + " seq " + Num(m.seq) + " (rank " + ref + " seq " + Num(m.ref_seq) +
             ") arg " + Num(m.arg) + "  " + TerminalSafe(m.name) + "\n";
    }
  }
  if (r.first_nonfinite) {
    out += "first NaN/Inf across ranks: rank " + std::to_string(r.first_nonfinite->rank) + " seq " +
           Num(r.first_nonfinite->seq) + " arg " + Num(r.first_nonfinite->arg) + "  " + TerminalSafe(r.first_nonfinite->name) + "\n";
  } else {
    out += "no NaN/Inf in any rank's outputs\n";
  }
  out += "verdict: " + CrossRankVerdict(r) + "\n";
  return out;
}

std::string CrossRankJson(const CrossRankResult& r, const std::string& dir) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("format").String("numtrace-cross-rank").Key("version").Int(1).Key("dir").String(dir);
  w.Key("reference_rank");
  r.ranks.empty() ? w.Null() : w.Int(r.ranks[0].rank);
  w.Key("verdict").String(CrossRankVerdict(r)).Key("ranks").BeginArray();
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankRollup& k = r.ranks[i];
    w.BeginObject().Key("rank").Int(k.rank).Key("path").String(k.path).Key("kernels").Uint(k.kernels);
    w.Key("truncated").Bool(k.truncated).Key("shared").Uint(i == 0 ? k.kernels : k.shared);
    w.Key("outputs_equal").Uint(i == 0 ? k.kernels : k.outputs_equal).Key("outputs_differ").Uint(k.outputs_differ);
    w.Key("inputs_equal_outputs_differ").Uint(k.inputs_equal_outputs_differ).Key("not_judged").Uint(k.not_judged);
    w.Key("first_nonfinite");
    Nonfinite(k.first_nonfinite, w);
    w.EndObject();
  }
  w.EndArray().Key("mismatches").BeginArray();
  for (const ReplicaMismatch& m : r.mismatches) {
    w.BeginObject().Key("rank").Int(m.rank).Key("seq").Uint(m.seq).Key("ref_seq").Uint(m.ref_seq);
    w.Key("arg").Uint(m.arg).Key("name").String(m.name).EndObject();
  }
  w.EndArray().Key("first_nonfinite");
  Nonfinite(r.first_nonfinite, w);
  w.EndObject();
  out += "\n";
  return out;
}

std::string CrossRankHtml(const CrossRankResult& r, const std::string& dir) {
  // Data in one JSON block, drawn by a few lines of script: the rank selector
  // shows that rank's roll-up and its mismatches. No external resource.
  std::string json = CrossRankJson(r, dir);
  std::string safe;
  for (char c : json) {
    if (c == '<') safe += "\\u003c"; else safe += c;
  }
  std::string out = R"(<!DOCTYPE html><html><head><meta charset="utf-8"><title>numtrace cross-rank: )" +
                    HtmlEscape(dir) + R"(</title><style>
body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
.bad{background:#fdd}.ok{background:#dfd}code{font-size:90%}</style></head><body>
<h1>Cross-rank check: <code>)" + HtmlEscape(dir) + R"(</code></h1>
<p id="verdict"></p>
<p>Rank: <select id="rank"></select> compared with the reference rank.</p>
<table id="rollup"></table><h2>Kernels with equal inputs and different outputs</h2>
<table id="mismatches"></table><h2>First NaN/Inf</h2><p id="nonfinite"></p>
<script id="data" type="application/json">)" + safe + R"(</script>
<script>
const d = JSON.parse(document.getElementById('data').textContent);
const sel = document.getElementById('rank');
const esc = s => String(s).replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'})[c]);
document.getElementById('verdict').innerHTML = 'Verdict: <b>' + d.verdict + '</b>, ' + d.ranks.length + ' ranks';
document.getElementById('verdict').className = d.verdict === 'consistent' ? 'ok' : 'bad';
d.ranks.forEach(r => { const o = document.createElement('option'); o.value = r.rank; o.textContent = 'rank ' + r.rank + (r.inputs_equal_outputs_differ ? ' (' + r.inputs_equal_outputs_differ + ' mismatches)' : ''); sel.appendChild(o); });
function nf(n) { return n ? 'rank ' + n.rank + ' seq ' + n.seq + ' arg ' + n.arg + ' <code>' + esc(n.name) + '</code>' : 'none'; }
function show() {
  const rank = Number(sel.value), r = d.ranks.find(x => x.rank === rank);
  const rows = [['trace', esc(r.path)], ['kernels', r.kernels], ['truncated', r.truncated], ['shared with reference', r.shared], ['outputs equal', r.outputs_equal], ['outputs differ', r.outputs_differ], ['inputs equal, outputs differ', r.inputs_equal_outputs_differ], ['not judged', r.not_judged], ['first NaN/Inf', nf(r.first_nonfinite)]];
  document.getElementById('rollup').innerHTML = rows.map(x => '<tr><th>' + x[0] + '</th><td>' + x[1] + '</td></tr>').join('');
  const ms = d.mismatches.filter(m => m.rank === rank);
  document.getElementById('mismatches').innerHTML = '<tr><th>seq</th><th>reference seq</th><th>arg</th><th>kernel</th></tr>' + (ms.length ? ms.map(m => '<tr class="bad"><td>' + m.seq + '</td><td>' + m.ref_seq + '</td><td>' + m.arg + '</td><td><code>' + esc(m.name) + '</code></td></tr>').join('') : '<tr><td colspan="4">none</td></tr>');
}
document.getElementById('nonfinite').innerHTML = nf(d.first_nonfinite);
sel.onchange = show;
if (d.ranks.length > 1) sel.value = d.ranks[1].rank;
show();
</script></body></html>
)";
  return out;
}

}  // namespace numtrace::analyzer
