#include "analyzer/report/rank_diff.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "analyzer/report/provenance_fields.h"
#include "common/format/enum_list.h"
#include "common/names/normalize.h"

namespace numtrace::analyzer {

std::string_view DivergenceKind(PairStatus s) {
  return IsDiverged(s) ? PairStatusName(s) : std::string_view();
}

SideHealth HealthOf(const Trace& t) {
  SideHealth h;
  h.truncated = t.truncated;
  h.undigested = t.LostDigests();
  if (t.footer) {
    h.dropped = t.footer->dropped;
    h.unmeasured = t.footer->unmeasured;
    if (t.footer->kernels > t.kernels.size()) h.missing = t.footer->kernels - t.kernels.size();
  } else {
    for (const NoteRecord& n : t.notes) {
      if (n.kind == kNoteUnmeasured) h.unmeasured += n.count.value_or(1);
    }
  }
  return h;
}

bool StepsPaired(const RankDiff& rd) {
  const auto& s = rd.result->steps;
  return !s || (s->unpaired_a == 0 && s->unpaired_b == 0);
}

std::string IncompleteReason(const DiffReport& report) {
  std::string out;
  for (const RankDiff& rd : report.ranks) {
    if (!StepsPaired(rd)) {
      if (!out.empty()) out.append("; ");
      out.append("steps without a counterpart (").append(std::to_string(rd.result->steps->unpaired_a))
          .append(" of A, ").append(std::to_string(rd.result->steps->unpaired_b)).append(" of B)");
    }
    for (const Trace* t : {rd.a, rd.b}) {
      const SideHealth h = HealthOf(*t);
      if (h.complete()) continue;
      if (!out.empty()) out.append("; ");
      out.append(t == rd.a ? "A (" : "B (").append(t->path).append("):");
      const char* sep = " ";
      if (h.truncated) {
        out.append(sep).append("cut short (no footer)");
        sep = ", ";
      }
      if (h.dropped) {
        out.append(sep).append("records dropped (").append(std::to_string(h.dropped)).append(")");
        sep = ", ";
      }
      if (h.unmeasured) {
        out.append(sep).append(std::to_string(h.unmeasured)).append(" kernels ran unmeasured");
        sep = ", ";
      }
      if (h.undigested) {
        out.append(sep).append(std::to_string(h.undigested)).append(" launches not digested");
        sep = ", ";
      }
      if (h.missing) {
        out.append(sep).append("footer counts ").append(std::to_string(t->footer->kernels))
            .append(" kernels, ").append(std::to_string(t->kernels.size())).append(" records read");
      }
    }
  }
  return out;
}

std::string CountersText(const Trace& t, bool zeros) {
  std::string out;
  if (!t.footer) return out;
  for (const auto& [name, count] : t.footer->counters) {
    if (count == 0 && !zeros) continue;
    if (!out.empty()) out.append(", ");
    out.append(name).append(" ").append(std::to_string(count));
  }
  return out;
}

uint64_t LaunchOrder(const Kernel& k) { return k.launch != kNoValue ? k.launch : k.seq; }

PairRef PairAt(const RankDiff& rd, uint32_t i) {
  const KernelPair& p = rd.result->alignment.pairs[i];
  return {p, rd.result->verdicts[i], rd.a->kernels[p.a], rd.b->kernels[p.b]};
}

std::string KernelLabel(const Trace& t, const Kernel& k) {
  if (k.level == RecordLevel::kOp) return std::string(t.DisplayName(k));
  return ShortName(t.DisplayName(k));
}

void WritePairNames(const RankDiff& rd, const PairRef& p, JsonWriter& w) {
  w.Key("a_seq").Uint(p.a.seq).Key("b_seq").Uint(p.b.seq).Key("order").Uint(LaunchOrder(p.a));
  w.Key("a_name").String(rd.a->Name(p.a)).Key("b_name").String(rd.b->Name(p.b));
}

void WriteRankedPairs(const RankDiff& rd, std::string_view key, const RankedPairs& set,
                      std::optional<uint64_t> diverged,
                      absl::FunctionRef<void(const PairVerdict&, JsonWriter&)> verdict_fields, JsonWriter& w) {
  auto entry = [&](uint32_t i) {
    const PairRef p = PairAt(rd, i);
    w.BeginObject();
    WritePairNames(rd, p, w);
    verdict_fields(p.verdict, w);
    w.Key("descendants").Uint(set.descendants[i]);
    ProvenanceFields(ProvenanceOf(*rd.a, &p.a, *rd.b, &p.b), w);
    w.EndObject();
  };
  w.Key(key).BeginObject().Key("count").Uint(set.count);
  if (diverged) w.Key("diverged").Uint(*diverged);
  w.Key("first");
  if (set.first) {
    entry(*set.first);
  } else {
    w.Null();
  }
  w.Key("top").BeginArray();
  for (uint32_t i : set.top) entry(i);
  w.EndArray().EndObject();
}

namespace {

ListFacts ListOf(const RankDiff& rd, const RankedPairs& set) {
  ListFacts l;
  const DiffResult& res = *rd.result;
  if (set.first) l.first = LaunchOrder(PairAt(rd, *set.first).a);
  l.top_scores.reserve(set.top.size());
  // As the summary carries it: a score that is not finite is null, read back as +inf.
  for (uint32_t i : set.top) {
    const double s = res.verdicts[i].score;
    l.top_scores.push_back(std::isfinite(s) ? s : std::numeric_limits<double>::infinity());
  }
  return l;
}

// The first by launch order; ties go to the lower rank (visited first).
void Earliest(const std::optional<uint64_t>& order, int rank, std::optional<uint64_t>& best, int& best_rank) {
  if (order && (!best || *order < *best)) {
    best = order;
    best_rank = rank;
  }
}

void Add(const SideFacts& s, bool first, SideFacts& sum) {
  sum.label = first ? s.label : (s.label == sum.label ? sum.label : "");  // the common label, else ""
  sum.kernels += s.kernels;
  sum.truncated = sum.truncated || s.truncated;
  sum.dropped += s.dropped;
  sum.unmeasured += s.unmeasured;
  sum.undigested += s.undigested;
}

RolledUpList RollUpList(const std::vector<RankFacts>& ranks, ListFacts RankFacts::*list) {
  RolledUpList out;
  std::optional<uint64_t> first;
  size_t top_n = 0;
  std::vector<std::pair<double, RankedEntry>> top;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const ListFacts& l = ranks[r].*list;
    out.count += l.count;
    out.diverged += l.diverged;
    Earliest(l.first, static_cast<int>(r), first, out.first_rank);
    top_n = std::max(top_n, l.top_scores.size());
    for (size_t e = 0; e < l.top_scores.size(); ++e) top.push_back({l.top_scores[e], {static_cast<int>(r), e}});
  }
  std::stable_sort(top.begin(), top.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (top.size() > top_n) top.resize(top_n);
  out.top.reserve(top.size());
  for (const auto& t : top) out.top.push_back(t.second);
  return out;
}

// The count names of the summary, in its order.
constexpr std::pair<std::string_view, uint64_t DiffCounts::*> kCountFields[] = {
    {"pairs", &DiffCounts::pairs},       {"bitwise_equal", &DiffCounts::bitwise_equal},
    {"within_tolerance", &DiffCounts::within_tolerance}, {"diverged", &DiffCounts::diverged},
    {"only_a", &DiffCounts::only_a},     {"only_b", &DiffCounts::only_b}};

}  // namespace

SideFacts SideOf(const Trace& t) {
  const SideHealth h = HealthOf(t);
  return {t.label, t.kernels.size(), h.truncated, h.dropped, h.unmeasured, h.undigested};
}

void WriteSideJson(std::string_view path, const SideFacts& s, const Trace* counters, JsonWriter& w) {
  w.BeginObject().Key("path").String(path).Key("label").String(s.label).Key("kernels").Uint(s.kernels);
  w.Key("truncated").Bool(s.truncated).Key("dropped").Uint(s.dropped).Key("unmeasured").Uint(s.unmeasured);
  w.Key("undigested").Uint(s.undigested);
  if (counters != nullptr && counters->footer && !counters->footer->counters.empty()) {
    w.Key("counters").BeginObject();
    for (const auto& [name, count] : counters->footer->counters) w.Key(name).Uint(count);
    w.EndObject();
  }
  w.EndObject();
}

bool RankComplete(const RankDiff& rd) {
  return HealthOf(*rd.a).complete() && HealthOf(*rd.b).complete() && StepsPaired(rd);
}

void WriteCountsJson(const DiffCounts& c, JsonWriter& w) {
  w.Key("counts").BeginObject();
  for (const auto& [name, field] : kCountFields) w.Key(name).Uint(c.*field);
  w.EndObject().Key("match_methods").BeginObject();
  for (int m = 0; m < kMatchMethodCount; ++m) w.Key(kMatchMethodNames[m]).Uint(c.by_method[m]);
  w.EndObject();
}

bool AddCount(std::string_view key, bool methods, uint64_t value, DiffCounts& c) {
  if (methods) {
    const std::optional<MatchMethod> m = EnumFromName<MatchMethod>(kMatchMethodNames, key);
    if (m) c.by_method[static_cast<int>(*m)] += value;
    return m.has_value();
  }
  for (const auto& [name, field] : kCountFields) {
    if (name == key) {
      c.*field += value;
      return true;
    }
  }
  return false;
}

RankFacts FactsOf(const RankDiff& rd) {
  const DiffResult& res = *rd.result;
  RankFacts f;
  f.verdict = res.verdict;
  f.complete = RankComplete(rd);
  f.a = SideOf(*rd.a);
  f.b = SideOf(*rd.b);
  f.counts = res.counts;
  if (res.first_divergence) f.first_divergence = LaunchOrder(PairAt(rd, *res.first_divergence).a);
  if (res.first_nonfinite_a) f.first_nonfinite_a = LaunchOrder(rd.a->kernels[*res.first_nonfinite_a]);
  if (res.first_nonfinite_b) f.first_nonfinite_b = LaunchOrder(rd.b->kernels[*res.first_nonfinite_b]);
  f.origins = ListOf(rd, res.origins);
  f.origins.count = res.origins.count;
  f.origins.diverged = res.origins.diverged;
  f.roots = ListOf(rd, res.roots);
  f.roots.count = res.roots.count;
  f.has_steps = res.steps.has_value();
  if (res.steps) f.first_differing_step = res.steps->first_differing;
  f.has_environment = res.environment.has_value();
  return f;
}

RolledUp RollUp(const std::vector<RankFacts>& ranks) {
  RolledUp up;
  std::optional<uint64_t> div, nfa, nfb;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankFacts& f = ranks[i];
    const int r = static_cast<int>(i);
    up.verdict = std::max(up.verdict, f.verdict);
    up.complete = up.complete && f.complete;
    Add(f.a, i == 0, up.a);
    Add(f.b, i == 0, up.b);
    for (const auto& [name, field] : kCountFields) up.counts.*field += f.counts.*field;
    for (int m = 0; m < kMatchMethodCount; ++m) up.counts.by_method[m] += f.counts.by_method[m];
    Earliest(f.first_divergence, r, div, up.first_divergence_rank);
    Earliest(f.first_nonfinite_a, r, nfa, up.first_nonfinite_a_rank);
    Earliest(f.first_nonfinite_b, r, nfb, up.first_nonfinite_b_rank);
    if (f.has_steps) {
      const RankFacts* best = up.steps_rank < 0 ? nullptr : &ranks[up.steps_rank];
      if (best == nullptr || (f.first_differing_step && (!best->first_differing_step ||
                                                         *f.first_differing_step < *best->first_differing_step))) {
        up.steps_rank = r;
      }
    }
  }
  if (up.first_divergence_rank >= 0 && ranks[up.first_divergence_rank].has_environment) {
    up.environment_rank = up.first_divergence_rank;
  } else {
    for (size_t i = 0; i < ranks.size() && up.environment_rank < 0; ++i) {
      if (ranks[i].has_environment) up.environment_rank = static_cast<int>(i);
    }
  }
  up.origins = RollUpList(ranks, &RankFacts::origins);
  up.roots = RollUpList(ranks, &RankFacts::roots);
  return up;
}

RolledUp RollUpRanks(const DiffReport& report) {
  std::vector<RankFacts> facts;
  facts.reserve(report.ranks.size());
  for (const RankDiff& rd : report.ranks) facts.push_back(FactsOf(rd));
  return RollUp(facts);
}

}  // namespace numtrace::analyzer
