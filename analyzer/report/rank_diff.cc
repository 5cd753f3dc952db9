#include "analyzer/report/rank_diff.h"

namespace numtrace::analyzer {

std::string_view DivergenceKind(PairStatus s) {
  return IsDiverged(s) ? PairStatusName(s) : std::string_view();
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
