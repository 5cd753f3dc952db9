#include "analyzer/report/terminal_summary.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "analyzer/judge/origin_hints.h"
#include "analyzer/report/capture_warnings.h"
#include "analyzer/judge/provenance.h"
#include "analyzer/report/dump_commands.h"
#include "analyzer/report/environment_report.h"
#include "analyzer/report/roots_report.h"
#include "analyzer/report/steps_report.h"
#include "common/text/terminal_safe.h"

namespace numtrace::analyzer {
namespace {

constexpr std::string_view kRed = "\033[31m", kGreen = "\033[32m", kYellow = "\033[33m",
                           kBold = "\033[1m", kDim = "\033[2m", kReset = "\033[0m";
constexpr size_t kMaxFullName = 300;

// Builds the summary. Only our own words go in as they are; text from a
// trace (names, paths, counters) goes through TerminalSafe.
class Writer {
 public:
  explicit Writer(bool color) : color_(color) {}
  Writer& operator<<(std::string_view s) {
    out_.append(s);
    return *this;
  }
  Writer& operator<<(uint64_t v) {
    out_.append(std::to_string(v));
    return *this;
  }
  // `text` in colour `code` (when colour is on).
  Writer& C(std::string_view code, std::string_view text) {
    if (color_) out_.append(code);
    out_.append(text);
    if (color_) out_.append(kReset);
    return *this;
  }
  std::string Take() { return std::move(out_); }

 private:
  bool color_;
  std::string out_;
};

std::string Num(double v) {
  if (std::isinf(v)) return "inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string Label(const Trace& t, const Kernel& k) { return TerminalSafe(KernelLabel(t, k)); }

// Where the two record streams part ("313 vs 247 ops, now what?"): per run,
// its first record without a partner, the length of the unpaired stretch it
// starts, and the last pair before it.
void StreamsPart(const RankDiff& rd, Writer& w) {
  const Alignment& al = rd.result->alignment;
  for (const auto& [side, only, t, other] : {std::tuple("A", &al.only_a, rd.a, rd.b), std::tuple("B", &al.only_b, rd.b, rd.a)}) {
    if (only->empty()) continue;
    const uint32_t first = only->front();
    size_t run = 1;
    while (run < only->size() && (*only)[run] == first + run) ++run;
    const KernelPair* before = nullptr;
    for (const KernelPair& p : al.pairs) {
      const uint32_t mine = t == rd.a ? p.a : p.b;
      if (mine < first && (before == nullptr || mine > (t == rd.a ? before->a : before->b))) before = &p;
    }
    w << "  the runs part at " << side << "#" << t->kernels[first].seq << " " << Label(*t, t->kernels[first]) << ": "
      << run << (run == 1 ? " record" : " consecutive records") << " only in " << side << " ("
      << only->size() << " in all)";
    if (before != nullptr) {
      const Kernel& ka = rd.a->kernels[before->a];
      w << ", after the pair A#" << ka.seq << " " << Label(*rd.a, ka) << " | B#" << rd.b->kernels[before->b].seq;
    } else {
      w << ", before any pair";
    }
    w << "\n";
  }
}

std::string_view VerdictColor(Verdict v) {
  return v == Verdict::kDiverged ? kRed : v == Verdict::kWithinTolerance ? kYellow : kGreen;
}

void Counts(const DiffCounts& c, Writer& w) {
  w << "  pairs " << c.pairs << ": " << c.bitwise_equal << " bitwise equal, "
    << c.within_tolerance << " within tolerance, ";
  w.C(c.diverged ? kRed : std::string_view(), std::to_string(c.diverged) + " diverged");
  w << "; unmatched: " << c.only_a << " only in A, " << c.only_b << " only in B\n";
  w << "  matched by:";
  for (int m = 0; m < kMatchMethodCount; ++m) {
    w << " " << MatchMethodName(static_cast<MatchMethod>(m)) << " " << c.by_method[m];
  }
  w << "\n";
}

std::string BufferText(const Trace& t, const Kernel& k, int32_t buffer) {
  if (buffer < 0 || static_cast<uint32_t>(buffer) >= k.buffer_count) return "no buffer";
  const Buffer& b = t.BuffersOf(k)[buffer];
  return "arg " + std::to_string(b.arg) + " " + std::string(DTypeName(b.dtype)) + "[" +
         std::to_string(b.stats.n) + "]";
}

void PairLine(const RankDiff& rd, uint32_t i, Writer& w) {
  const auto [p, v, ka, kb] = PairAt(rd, i);
  w << "    A#" << ka.seq << " " << Label(*rd.a, ka);
  std::string lb = Label(*rd.b, kb);
  if (lb != Label(*rd.a, ka) || kb.seq != ka.seq) w << "  |  B#" << kb.seq << " " << lb;
  w << "  ";
  if (IsDiverged(v.status)) {
    w.C(kRed, std::string(PairStatusName(v.status)) + " score " + Num(v.score) + " rel " + Num(v.rel_diff));
  } else {
    w.C(kDim, v.status == PairStatus::kBitwiseEqual ? "equal" : "within tol, score " + Num(v.score));
  }
  if (v.cause != Cause::kNone) w << " " << CauseName(v.cause);
  w << "\n";
}

// Where in the model a pair came from, "layers.1.fc (aten::addmm, forward)";
// both sides when they differ. Empty when the traces carry no provenance.
std::string WhereText(const RankDiff& rd, uint32_t i) {
  const PairRef p = PairAt(rd, i);
  const PairProvenance pv = ProvenanceOf(*rd.a, &p.a, *rd.b, &p.b);
  if (!pv.any()) return "";
  const std::string a = ProvenanceLabel(pv.a_scope, pv.a_op, pv.phase, pv.a_src);
  const std::string b = ProvenanceLabel(pv.b_scope, pv.b_op, rd.b->PhaseOf(p.b), pv.b_src);
  if (b.empty() || a == b) return TerminalSafe(a);
  if (a.empty()) return "B: " + TerminalSafe(b);
  return TerminalSafe(a) + "  |  B: " + TerminalSafe(b);
}

void WhereLine(const RankDiff& rd, uint32_t i, Writer& w) {
  const std::string where = WhereText(rd, i);
  if (where.empty()) return;
  w << "    in ";
  w.C(kBold, where);
  w << "\n";
}

// Both kernels of a pair on two lines, with the deciding buffer.
void PairBlock(const RankDiff& rd, uint32_t i, Writer& w) {
  const auto [p, v, ka, kb] = PairAt(rd, i);
  w << "    A seq " << ka.seq << ": ";
  w.C(kBold, Label(*rd.a, ka));
  w << "  " << BufferText(*rd.a, ka, v.a_buffer) << "\n";
  w << "    B seq " << kb.seq << ": ";
  w.C(kBold, Label(*rd.b, kb));
  w << "  " << BufferText(*rd.b, kb, v.b_buffer) << "\n";
}

constexpr size_t kMaxEnvValue = 80;
constexpr size_t kMaxEnvLines = 12;

std::string EnvValue(std::string_view v) {
  return "'" + TerminalSafe(v.substr(0, kMaxEnvValue)) + (v.size() > kMaxEnvValue ? "...'" : "'");
}

// What else differed, before any kernel: each differing key with both
// values and its effect, relevant ones first (judge/environment_diff.h).
void Environment(const RankDiff& rd, Writer& w) {
  const DiffResult& res = *rd.result;
  if (!res.environment) return;
  const EnvironmentDiff& d = *res.environment;
  if (!d.a_recorded || !d.b_recorded) {
    w << "  environment: only " << (d.a_recorded ? "A" : "B") << " recorded one (" << (d.a_recorded ? "B" : "A")
      << "'s trace has none): not compared\n";
    return;
  }
  w << "  environment: ";
  if (d.differs.empty() && d.only_a.empty() && d.only_b.empty()) {
    w << d.same << " keys, all the same\n";
    return;
  }
  w << static_cast<uint64_t>(d.differs.size()) << " differ, " << d.same << " same";
  if (!d.only_a.empty()) w << ", " << static_cast<uint64_t>(d.only_a.size()) << " only in A";
  if (!d.only_b.empty()) w << ", " << static_cast<uint64_t>(d.only_b.size()) << " only in B";
  w << "\n";
  size_t shown = 0;
  for (const EnvDifference& e : d.differs) {
    if (shown++ == kMaxEnvLines) {
      w << "    ... and " << static_cast<uint64_t>(d.differs.size() - kMaxEnvLines) << " more (--json, --html)\n";
      break;
    }
    w << "    ";
    w.C(e.relevant() ? kYellow : kDim, TerminalSafe(e.key));
    w << ": A " << EnvValue(e.a) << ", B " << EnvValue(e.b);
    if (!EffectOf(e).empty()) w << " - " << EffectOf(e);
    w << "\n";
  }
  auto only = [&](std::string_view side, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    w << "    only in " << side << ": ";
    for (size_t i = 0; i < keys.size() && i < kMaxEnvLines; ++i) w << (i ? ", " : "") << TerminalSafe(keys[i]);
    if (keys.size() > kMaxEnvLines) w << ", ...";
    w << "\n";
  };
  only("A", d.only_a);
  only("B", d.only_b);
}

void FirstDivergence(const RankDiff& rd, const TerminalOptions& opt, Writer& w) {
  const DiffResult& res = *rd.result;
  if (!res.first_divergence) return;
  const uint32_t i = *res.first_divergence;
  const auto [p, v, ka, kb] = PairAt(rd, i);
  w.C(kBold, "  first divergence");
  w << " (" << DivergenceKind(v.status) << ", score " << Num(v.score) << ", rel diff " << Num(v.rel_diff)
    << ", cause " << CauseName(v.cause) << ", matched " << MatchMethodName(p.method) << "):\n";
  WhereLine(rd, i, w);
  for (const EnvDifference* e : AffectingFirstDivergence(rd)) {
    w << "    affected by ";
    w.C(kYellow, TerminalSafe(e->key));
    w << " (A " << EnvValue(e->a) << ", B " << EnvValue(e->b) << "): " << EffectOf(*e) << "\n";
  }
  PairBlock(rd, i, w);
  // Full names of templated kernels run to thousands of characters; the
  // HTML report and the JSON summary keep them whole.
  std::string_view full = rd.a->DisplayName(ka);
  w.C(kDim, "    A full name: ");
  w << TerminalSafe(full.substr(0, kMaxFullName)) << (full.size() > kMaxFullName ? "..." : "") << "\n";
  if (v.cause == Cause::kInherited && !res.origins.of_first_divergence.empty()) {
    const uint32_t o = res.origins.of_first_divergence.front();
    w << "    inherited from A#" << rd.a->kernels[res.alignment.pairs[o].a].seq << " "
      << Label(*rd.a, rd.a->kernels[res.alignment.pairs[o].a]);
    if (res.origins.of_first_divergence.size() > 1) {
      w << " (and " << static_cast<uint64_t>(res.origins.of_first_divergence.size() - 1) << " more origins)";
    }
    w << "\n";
  } else if (v.cause == Cause::kInherited) {
    // An input differs, but no paired kernel of A wrote it differently.
    w << "    inherited from no captured origin (an input was written outside the captured kernels or by an "
         "unmatched one)\n";
  }
  if (!rd.a->records_launches || !rd.b->records_launches) {
    // A log of ops names an op, not a launch numtrace could dump.
    const Trace& side = rd.a->records_launches ? *rd.b : *rd.a;
    w << "  element view: a " << side.kind << " holds statistics only; capture both runs with `numtrace run` "
         "for per-launch tensor dumps\n";
  } else {
    const DumpCommands dump = BuildDumpCommands(*rd.a, ka, *rd.b, kb);
    w << "  element view: re-capture both sides with a dump of this launch, then compare:\n";
    for (const std::string* cmd : {&dump.capture_a, &dump.capture_b, &dump.tensors}) {
      w << "    " << TerminalSafe(*cmd) << "\n";
    }
  }
  if (opt.context > 0 && i > 0) {
    w << "  just before it:\n";
    uint32_t from = i > static_cast<uint32_t>(opt.context) ? i - opt.context : 0;
    for (uint32_t j = from; j < i; ++j) PairLine(rd, j, w);
  }
}

// The lead: where the divergence beyond tolerance starts (roots.h).
void RootsLead(const RankDiff& rd, Writer& w) {
  const std::string sentence = RootsSentence(rd);
  if (sentence.empty()) return;
  w << "  ";
  w.C(kBold, TerminalSafe(sentence));
  w << "\n";
}

// The first origin, when it is not the first divergence itself: where the
// runs really part.
void FirstOrigin(const RankDiff& rd, Writer& w) {
  const DiffResult& res = *rd.result;
  const Origins& o = res.origins;
  if (!o.first || (res.first_divergence && *res.first_divergence == *o.first)) return;
  const PairVerdict& v = res.verdicts[*o.first];
  w.C(kBold, "  first origin");
  w << " (where the runs part: " << PairStatusName(v.status) << ", score " << Num(v.score) << ", "
    << static_cast<uint64_t>(o.descendants[*o.first]) << " diverged kernels descend from it):\n";
  WhereLine(rd, *o.first, w);
  PairBlock(rd, *o.first, w);
}

void OriginList(const RankDiff& rd, int top, Writer& w) {
  const Origins& o = rd.result->origins;
  if (o.count == 0) return;
  w << "  origins: " << o.count << " kernel(s) introduce a difference (" << o.diverged
    << " beyond tolerance)\n";
  int shown = 0;
  for (uint32_t i : o.top) {
    if (shown++ >= top) break;
    const Kernel& k = rd.a->kernels[rd.result->alignment.pairs[i].a];
    const std::string where = WhereText(rd, i);
    w << "    A#" << k.seq << " " << Label(*rd.a, k) << (where.empty() ? "" : " in " + where) << "  score "
      << Num(rd.result->verdicts[i].score) << ", fix it and " << static_cast<uint64_t>(o.descendants[i])
      << " later divergences go away\n";
    // A known family of run-to-run nondeterminism (judge/origin_hints.h).
    if (const OriginHint* h = HintForKernel(rd.a->Demangled(k))) {
      w.C(kDim, "      " + TerminalSafe(h->family) + ": " + TerminalSafe(h->hint));
      w << "\n";
    }
  }
}

void RootList(const RankDiff& rd, int top, Writer& w) {
  const Roots& o = rd.result->roots;
  if (o.count < 2) return;  // one root: the lead sentence says it all
  w << "  roots: " << o.count << " pair(s) where a divergence beyond tolerance is born\n";
  int shown = 0;
  for (uint32_t i : o.top) {
    if (shown++ >= top) break;
    const Kernel& k = rd.a->kernels[rd.result->alignment.pairs[i].a];
    const std::string where = WhereText(rd, i);
    w << "    A#" << k.seq << " " << Label(*rd.a, k) << (where.empty() ? "" : " in " + where) << "  "
      << CauseName(rd.result->verdicts[i].cause) << ", score " << Num(rd.result->verdicts[i].score) << ", "
      << static_cast<uint64_t>(o.descendants[i]) << " diverged pairs descend from it\n";
  }
}

void Nonfinite(const RankDiff& rd, Writer& w) {
  const DiffResult& res = *rd.result;
  auto line = [&](std::string_view side, const Trace& t, std::optional<uint32_t> k) {
    w << "  first NaN/Inf in " << side << ": ";
    if (!k) {
      w << "none\n";
      return;
    }
    const Kernel& kernel = t.kernels[*k];
    w.C(kRed, "seq " + std::to_string(kernel.seq) + " " + Label(t, kernel));
    const std::string where = ProvenanceLabel(t.Scope(kernel), t.Op(kernel), t.PhaseOf(kernel));
    if (!where.empty()) w << " in " << TerminalSafe(where);
    w << "\n";
  };
  if (res.first_nonfinite_a || res.first_nonfinite_b) {
    line("A", *rd.a, res.first_nonfinite_a);
    line("B", *rd.b, res.first_nonfinite_b);
  }
}

void Warnings(const RankDiff& rd, bool verbose, Writer& w) {
  for (const Trace* t : {rd.a, rd.b}) {
    const std::string_view side = t == rd.a ? "A" : "B";
    const SideHealth h = HealthOf(*t);
    const std::string path = TerminalSafe(t->path);
    if (h.truncated) {
      w.C(kYellow, "  warning: ");
      w << path << " is truncated (" << t->truncated_how << ")\n";
    }
    if (h.dropped > 0) {
      w.C(kYellow, "  warning: ");
      w << path << ": records dropped (" << h.dropped << ")\n";
    }
    for (const Trace::Skipped& s : t->skipped) {
      if (!s.data_loss) continue;
      w.C(kYellow, "  warning: ");
      w << path << ": " << s.count << " records skipped, " << s.name << ": " << s.description << "\n";
    }
    if (h.unmeasured > 0) {
      w.C(kYellow, "  warning: ");
      w << h.unmeasured << " kernels ran unmeasured in " << side << "\n";
    }
    if (h.undigested > 0) {
      w.C(kYellow, "  warning: ");
      w << h.undigested << " launches not digested in " << side << "\n";
    }
    for (const std::string& c : CaptureWarnings(*t, side)) {
      w.C(kYellow, "  warning: ");
      w << TerminalSafe(c) << "\n";
    }
    const std::string counters = CountersText(*t, verbose);
    if (!counters.empty()) w << "  " << side << " counters: " << TerminalSafe(counters) << "\n";
  }
  for (const std::string& s : rd.result->alignment.warnings) {
    w.C(kYellow, "  warning: ");
    w << TerminalSafe(s) << "\n";
  }
}

void Top(const RankDiff& rd, int top, Writer& w) {
  const DiffResult& res = *rd.result;
  if (top <= 0 || res.top_divergences.empty()) return;
  w << "  largest divergences (by score):\n";
  int shown = 0;
  for (uint32_t i : res.top_divergences) {
    if (shown++ >= top) break;
    PairLine(rd, i, w);
  }
}

}  // namespace

bool ShouldUseColor(ColorMode mode, bool is_tty) {
  if (mode != ColorMode::kAuto) return mode == ColorMode::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  return is_tty && (no_color == nullptr || *no_color == '\0');
}

std::string TerminalSummary(const DiffReport& report, const TerminalOptions& opt) {
  Writer w(opt.color);
  const RolledUp up = RollUpRanks(report);
  w << "numtrace-diff: ";
  w.C(std::string(VerdictColor(up.verdict)) + std::string(kBold), VerdictName(up.verdict));
  w << "  (A: " << TerminalSafe(report.path_a) << ", " << up.a.kernels << " kernels; B: "
    << TerminalSafe(report.path_b) << ", " << up.b.kernels << " kernels)";
  // A diverged run whose settings differ where it matters: say so first.
  if (const int e = up.environment_rank; up.verdict == Verdict::kDiverged && e >= 0) {
    const std::string keys = VerdictEnvironmentKeys(*report.ranks[e].result->environment);
    if (!keys.empty()) {
      w << " - ";
      w.C(kYellow, "settings differ: " + TerminalSafe(keys));
    }
  }
  w << "\n";
  if (const Trace* t = SideWithoutEnvironment(report)) w << "  environment: " << NoEnvironmentNote(*t) << "\n";
  if (!up.complete) {
    w.C(kYellow, "  incomplete: ");
    w << "a summary of fewer kernels than ran is not a clean bill (see warnings)\n";
  }
  if (report.per_rank) {
    // Before any rank or kernel, also when every rank agrees: what else
    // differed (the rank that diverges first, else the first that compared).
    if (up.environment_rank >= 0) Environment(report.ranks[up.environment_rank], w);
    w << "  " << report.ranks.size() << (report.ranks.size() == 1 ? " rank\n" : " ranks\n");
    Counts(up.counts, w);
    for (const RankDiff& rd : report.ranks) {
      w << "  rank " << static_cast<uint64_t>(rd.rank) << ": ";
      w.C(VerdictColor(rd.result->verdict), VerdictName(rd.result->verdict));
      w << ", " << rd.result->counts.diverged << " diverged of " << rd.result->counts.pairs
        << " pairs\n";
    }
  }
  for (size_t r = 0; r < report.ranks.size(); ++r) {
    const RankDiff& rd = report.ranks[r];
    bool detail = !report.per_rank || static_cast<int>(r) == up.first_divergence_rank ||
                  static_cast<int>(r) == up.first_nonfinite_a_rank ||
                  static_cast<int>(r) == up.first_nonfinite_b_rank ||
                  rd.result->steps.has_value() ||
                  !HealthOf(*rd.a).complete() || !HealthOf(*rd.b).complete();
    if (!detail) continue;
    if (report.per_rank) {
      w.C(kBold, "rank " + std::to_string(rd.rank));
      if (static_cast<int>(r) == up.first_divergence_rank) w << " (diverges first)";
      w << ":\n";
    }
    // Where the divergence beyond tolerance starts, which step the runs part
    // at first; the counts and lists after.
    if (!report.per_rank) Environment(rd, w);
    RootsLead(rd, w);
    w << StepsTerminal(rd, opt.color);
    FirstDivergence(rd, opt, w);
    FirstOrigin(rd, w);
    if (!report.per_rank) Counts(rd.result->counts, w);
    StreamsPart(rd, w);
    Warnings(rd, opt.verbose, w);
    Nonfinite(rd, w);
    RootList(rd, opt.top, w);
    OriginList(rd, opt.top, w);
    Top(rd, opt.top, w);
  }
  return w.Take();
}

}  // namespace numtrace::analyzer
