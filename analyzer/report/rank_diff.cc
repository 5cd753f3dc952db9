#include "analyzer/report/rank_diff.h"

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

RolledUp RollUpRanks(const DiffReport& report) {
  RolledUp r;
  uint64_t best_div = 0, best_nfa = 0, best_nfb = 0;
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    const RankDiff& rd = report.ranks[i];
    const DiffResult& res = *rd.result;
    if (res.verdict > r.verdict) r.verdict = res.verdict;
    const DiffCounts& c = res.counts;
    r.counts.pairs += c.pairs;
    r.counts.bitwise_equal += c.bitwise_equal;
    r.counts.within_tolerance += c.within_tolerance;
    r.counts.diverged += c.diverged;
    r.counts.only_a += c.only_a;
    r.counts.only_b += c.only_b;
    for (int m = 0; m < kMatchMethodCount; ++m) r.counts.by_method[m] += c.by_method[m];
    r.kernels_a += rd.a->kernels.size();
    r.kernels_b += rd.b->kernels.size();
    r.truncated_a |= rd.a->truncated;
    r.truncated_b |= rd.b->truncated;
    // Ties go to the lower rank: ranks are visited in ascending order.
    if (res.first_divergence) {
      const KernelPair& p = res.alignment.pairs[*res.first_divergence];
      uint64_t order = LaunchOrder(rd.a->kernels[p.a]);
      if (r.first_divergence_rank < 0 || order < best_div) {
        r.first_divergence_rank = static_cast<int>(i);
        best_div = order;
      }
    }
    if (res.first_nonfinite_a) {
      uint64_t order = LaunchOrder(rd.a->kernels[*res.first_nonfinite_a]);
      if (r.first_nonfinite_a_rank < 0 || order < best_nfa) {
        r.first_nonfinite_a_rank = static_cast<int>(i);
        best_nfa = order;
      }
    }
    if (res.first_nonfinite_b) {
      uint64_t order = LaunchOrder(rd.b->kernels[*res.first_nonfinite_b]);
      if (r.first_nonfinite_b_rank < 0 || order < best_nfb) {
        r.first_nonfinite_b_rank = static_cast<int>(i);
        best_nfb = order;
      }
    }
  }
  return r;
}

}  // namespace numtrace::analyzer
