#include "analyzer/ranks/cross_rank.h"

#include <algorithm>
#include <tuple>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/value_compare.h"

namespace numtrace::analyzer {
namespace {

// Equal as numtrace-diff judges equal, by what the values' fingerprints
// say (judge/value_compare.h): equal bytes, or every printed value equal.
bool Same(const Trace& ta, const Buffer& a, const Trace& tb, const Buffer& b) {
  const auto ia = static_cast<uint32_t>(&a - ta.buffers.data()), ib = static_cast<uint32_t>(&b - tb.buffers.data());
  return CompareValues(ta, ia, tb, ib, Tolerance{}).status == PairStatus::kBitwiseEqual;
}

// The first output of `k` that holds a NaN or Inf, if any.
std::optional<uint32_t> NonfiniteOutput(const Trace& t, const Kernel& k) {
  for (const Buffer& b : t.BuffersOf(k)) {
    if (b.IsOutput() && b.HasNonfinite()) return b.arg;
  }
  return std::nullopt;
}

}  // namespace

CrossRankResult CompareAcrossRanks(const std::vector<const Trace*>& traces) {
  CrossRankResult result;
  if (traces.empty()) return result;
  const Trace& ref = *traces[0];
  for (size_t r = 0; r < traces.size(); ++r) {
    const Trace& t = *traces[r];
    RankRollup roll;
    roll.rank = t.rank;
    roll.path = t.path;
    roll.kernels = t.kernels.size();
    roll.truncated = t.truncated;
    // Position of each of this rank's kernels in rank 0's order.
    std::vector<uint64_t> order(t.kernels.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = t.kernels[i].seq;
    if (r > 0) {
      Alignment alignment = Align(ref, t);
      roll.shared = alignment.pairs.size();
      for (const KernelPair& p : alignment.pairs) {
        const Kernel& ka = ref.kernels[p.a];
        const Kernel& kb = t.kernels[p.b];
        order[p.b] = ka.seq;
        auto ba = ref.BuffersOf(ka);
        auto bb = t.BuffersOf(kb);
        bool layout_ok = ba.size() == bb.size();
        for (size_t i = 0; layout_ok && i < ba.size(); ++i) {
          layout_ok = ba[i].bytes == bb[i].bytes && ba[i].dtype == bb[i].dtype && ba[i].role == bb[i].role;
        }
        if (!layout_ok) {
          ++roll.not_judged;
          continue;
        }
        bool any_input = false, inputs_equal = true, outputs_equal = true;
        uint32_t first_arg = 0;
        for (size_t i = 0; i < ba.size(); ++i) {
          if (ba[i].IsOutput()) {
            // What an in-place kernel overwrote is an input too: a buffer
            // that already differed before the launch makes it no origin.
            if (ba[i].has_pre && bb[i].has_pre) {
              any_input = true;
              inputs_equal = inputs_equal && ba[i].pre_hash == bb[i].pre_hash;
            }
            if (outputs_equal && !Same(ref, ba[i], t, bb[i])) {
              outputs_equal = false;
              first_arg = bb[i].arg;
            }
          } else {
            any_input = true;
            inputs_equal = inputs_equal && Same(ref, ba[i], t, bb[i]);
          }
        }
        outputs_equal ? ++roll.outputs_equal : ++roll.outputs_differ;
        if (!any_input) {
          ++roll.not_judged;
        } else if (inputs_equal && !outputs_equal) {
          ++roll.inputs_equal_outputs_differ;
          result.mismatches.push_back({t.rank, kb.seq, ka.seq, std::string(t.Demangled(kb)), first_arg});
        }
      }
    }
    for (size_t i = 0; i < t.kernels.size(); ++i) {
      if (std::optional<uint32_t> arg = NonfiniteOutput(t, t.kernels[i])) {
        roll.first_nonfinite = NonfiniteAt{t.rank, t.kernels[i].seq, order[i],
                                           std::string(t.Demangled(t.kernels[i])), *arg};
        break;
      }
    }
    if (roll.first_nonfinite &&
        (!result.first_nonfinite ||
         std::tie(roll.first_nonfinite->order, roll.first_nonfinite->rank) <
             std::tie(result.first_nonfinite->order, result.first_nonfinite->rank))) {
      result.first_nonfinite = roll.first_nonfinite;
    }
    result.ranks.push_back(std::move(roll));
  }
  std::stable_sort(result.mismatches.begin(), result.mismatches.end(),
                   [](const ReplicaMismatch& x, const ReplicaMismatch& y) {
                     return std::tie(x.ref_seq, x.rank) < std::tie(y.ref_seq, y.rank);
                   });
  return result;
}

}  // namespace numtrace::analyzer
