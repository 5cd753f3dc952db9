#include "analyzer/report/cross_rank_report.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "analyzer/report/html_escape.h"
#include "analyzer/report/html_page.h"
#include "analyzer/report/html_template.h"
#include "common/format/diff_summary.h"
#include "common/format/json_writer.h"
#include "common/format/summary_words.h"
#include "common/text/terminal_safe.h"

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

ReplicaVerdict VerdictOf(const CrossRankResult& r) {
  return r.mismatches.empty() ? ReplicaVerdict::kConsistent : ReplicaVerdict::kReplicasDiffer;
}

ReplicaVerdict VerdictOf(const OddRankResult& r) {
  return r.odd_total == 0 ? ReplicaVerdict::kConsistent : ReplicaVerdict::kReplicasDiffer;
}

// The cross-rank page (cross_rank_template.html): the header - verdict
// badge (coloured as a diff's: replicas that agree as identical, that differ
// as diverged), the directory, the rank picker - and the public JSON
// document the page's script draws the rest from, script-safe.
std::string RanksPage(ReplicaVerdict verdict, const std::string& dir,
                      const std::vector<std::pair<std::string, std::string>>& picks, size_t picked,
                      const std::string& json) {
  std::string head;
  const Verdict colour = verdict == ReplicaVerdict::kConsistent ? Verdict::kIdentical : Verdict::kDiverged;
  AppendVerdictBadge(ReplicaVerdictName(verdict), colour, &head);
  head.append("<code>");
  AppendHtmlEscaped(dir, &head);
  head.append("</code> ");
  AppendRankPicker(picks, picked, &head);
  std::string data;
  AppendScriptSafe(json, &data);
  return FillTemplate(CrossRankTemplate(), {{kHtmlHeadMarker, &head}, {kHtmlSummaryDataMarker, &data}});
}

std::string Where(const std::string& host, const std::string& gpu) {
  if (host.empty() && gpu.empty()) return "";
  std::string s = " (";
  if (!host.empty()) s += "host " + TerminalSafe(host);
  if (!host.empty() && !gpu.empty()) s += ", ";
  if (!gpu.empty()) s += "GPU " + TerminalSafe(gpu);
  return s + ")";
}

}  // namespace

std::string CrossRankVerdict(const CrossRankResult& r) {
  return std::string(ReplicaVerdictName(VerdictOf(r)));
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
  // The picker: every rank (the reference first), a rank with mismatches
  // says how many; the first rank compared with the reference is picked.
  std::vector<std::pair<std::string, std::string>> picks;
  for (const RankRollup& k : r.ranks) {
    std::string text = "rank " + std::to_string(k.rank);
    if (k.inputs_equal_outputs_differ) text += " (" + Num(k.inputs_equal_outputs_differ) + " mismatches)";
    picks.emplace_back(std::to_string(k.rank), std::move(text));
  }
  return RanksPage(VerdictOf(r), dir, picks, r.ranks.size() > 1 ? 1 : 0, CrossRankJson(r, dir));
}

std::string OddRankVerdict(const OddRankResult& r) { return std::string(ReplicaVerdictName(VerdictOf(r))); }

std::string OddRankTerminal(const OddRankResult& r, const std::string& dir, int top) {
  std::string out = "numtrace-diff --across-ranks " + TerminalSafe(dir) + ": " + Num(r.ranks.size()) + " ranks, " +
                    Num(r.steps_compared) + " steps compared by digest (steps " + std::to_string(r.first_step) +
                    ".." + std::to_string(r.last_step) + ")\n";
  out += "launches: " + Num(r.launches_agreeing) + " where every rank agrees, " + Num(r.launches_own_data) +
         " on each rank's own data (no majority), " + Num(r.launches_odd) + " with an odd rank out\n";
  for (const std::string& n : r.notes) out += "note: " + TerminalSafe(n) + "\n";
  if (r.odd_total == 0) {
    out += "replicas agree: wherever a majority of ranks agrees, every rank does\n";
  } else {
    const OddRankOut& first = r.odd.front();
    out += "odd rank out: rank " + std::to_string(first.rank) + Where(first.host, first.gpu) + " at step " +
           std::to_string(first.step) + ", launch " + Num(first.index) + " " + TerminalSafe(first.name) + ": " +
           Num(first.majority) + " of " + Num(first.ranks) + " ranks agree, it does not\n";
    out += Num(r.odd_total) + " departures, earliest first";
    if (r.odd_total > r.odd.size()) out += " (the first " + Num(r.odd.size()) + " listed in the JSON)";
    out += ":\n";
    int shown = 0;
    for (const OddRankOut& o : r.odd) {
      if (shown++ >= top) {
        out += "  ... " + Num(r.odd_total - top) + " more (--top, or the JSON)\n";
        break;
      }
      out += "  rank " + std::to_string(o.rank) + " step " + std::to_string(o.step) + " launch " + Num(o.index) + " (" +
             Num(o.majority) + "/" + Num(o.ranks) + " agree)  " + TerminalSafe(o.name) + "\n";
    }
    out += "ranks that departed:";
    for (const OddRankRank& k : r.ranks) {
      if (k.odd == 0) continue;
      out += " " + std::to_string(k.rank) + Where(k.host, k.gpu) + " from step " + std::to_string(k.first_odd_step) +
             " (" + Num(k.odd) + ")";
    }
    out += "\n";
  }
  out += "verdict: " + OddRankVerdict(r) + "\n";
  return out;
}

std::string OddRankJson(const OddRankResult& r, const std::string& dir) {
  namespace key = summary_key;
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("format").String("numtrace-cross-rank").Key("version").Int(1).Key("dir").String(dir);
  w.Key("mode").String("digests").Key("verdict").String(OddRankVerdict(r));
  w.Key("steps").BeginObject().Key("compared").Uint(r.steps_compared).Key("first").Int(r.first_step);
  w.Key("last").Int(r.last_step).EndObject();
  w.Key("launches").BeginObject().Key("agreeing").Uint(r.launches_agreeing).Key("own_data").Uint(r.launches_own_data);
  w.Key("odd").Uint(r.launches_odd).EndObject();
  w.Key(key::kRanks).BeginArray();
  for (const OddRankRank& k : r.ranks) {
    w.BeginObject().Key(key::kRank).Int(k.rank).Key("path").String(k.path);
    if (!k.host.empty()) w.Key(key::kHost).String(k.host);
    if (!k.gpu.empty()) w.Key(key::kGpu).String(k.gpu);
    w.Key("steps").Uint(k.steps).Key("truncated").Bool(k.truncated).Key("odd").Uint(k.odd).Key("first_odd_step");
    k.first_odd_step < 0 ? w.Null() : w.Int(k.first_odd_step);
    w.EndObject();
  }
  w.EndArray().Key(key::kOddRankOut).BeginArray();
  for (const OddRankOut& o : r.odd) {
    w.BeginObject().Key(key::kRank).Int(o.rank).Key(key::kStep).Int(o.step).Key(key::kIndex).Uint(o.index);
    w.Key(key::kName).String(o.name).Key(key::kMajority).Uint(o.majority).Key(key::kRanks).Uint(o.ranks);
    if (!o.host.empty()) w.Key(key::kHost).String(o.host);
    if (!o.gpu.empty()) w.Key(key::kGpu).String(o.gpu);
    w.EndObject();
  }
  w.EndArray().Key(key::kOddRankOutTotal).Uint(r.odd_total).Key("notes").BeginArray();
  for (const std::string& n : r.notes) w.String(n);
  w.EndArray().EndObject();
  out += "\n";
  return out;
}

std::string OddRankHtml(const OddRankResult& r, const std::string& dir) {
  // Every rank is on the strip: no picker.
  return RanksPage(VerdictOf(r), dir, {}, 0, OddRankJson(r, dir));
}

}  // namespace numtrace::analyzer
