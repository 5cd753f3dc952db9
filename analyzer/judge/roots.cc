#include "analyzer/judge/roots.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "analyzer/judge/buffer_compare.h"
#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/value_compare.h"
#include "analyzer/judge/origins.h"

namespace numtrace::analyzer {
namespace {

bool IsRoot(const PairVerdict& v) {
  return IsDiverged(v.status) && (v.cause == Cause::kOrigin || v.cause == Cause::kBorn);
}

std::vector<uint32_t> Inputs(const Trace& t, uint32_t k) {
  std::vector<uint32_t> in;
  const Kernel& kernel = t.kernels[k];
  for (uint32_t i = kernel.first_buffer; i < kernel.first_buffer + kernel.buffer_count; ++i) {
    if (t.buffers[i].role == Role::kIn) in.push_back(i);
  }
  return in;
}

// Whether an operator record read `buffer` from an op that has no partner.
bool FromUnpairedOp(const RunFlow& s, uint32_t k, uint32_t buffer) {
  const uint32_t producer = s.flow.Producer(buffer);
  return s.trace.kernels[k].level == RecordLevel::kOp && producer != DataFlow::kNoProducer &&
         s.pair_of[producer] < 0;
}

// Whether some input buffer, compared with its partner by position, is
// beyond tolerance. Buffers without statistics (n = 0 in our traces) say
// nothing here; their producers do. At operator level an input written by
// an op only one run ran (A's dropout, gone from B's model in eval()) does
// not count either: the divergence is born in that op, which has no partner
// to be named at, and the first pair reading what it wrote stands for it.
bool InputBeyondTolerance(const RunFlow& sa, uint32_t ka, const RunFlow& sb, uint32_t kb, const Tolerance& tolerance) {
  const Trace& a = sa.trace;
  const Trace& b = sb.trace;
  const std::vector<uint32_t> ia = Inputs(a, ka), ib = Inputs(b, kb);
  for (size_t i = 0; i < std::min(ia.size(), ib.size()); ++i) {
    const Buffer& x = a.buffers[ia[i]];
    const Buffer& y = b.buffers[ib[i]];
    if (x.stats.hash == y.stats.hash) continue;
    if (FromUnpairedOp(sa, ka, ia[i]) || FromUnpairedOp(sb, kb, ib[i])) continue;
    // A byte-hashed input without statistics (n = 0) says nothing; values
    // a log printed always say what they have.
    const bool has_stats = (x.fingerprint & y.fingerprint & kBytesHash) == 0 || (x.stats.n > 0 && y.stats.n > 0);
    const BufferVerdict v = has_stats ? CompareValues(a, ia[i], b, ib[i], tolerance) : BufferVerdict{};
    if (IsDiverged(v.status)) return true;
  }
  return false;
}

// An operator of the backward whose output differs in shape though all it
// read is equal (the `expand` of a loss's gradient): autograd gave it that
// shape from the forward, through sizes no tensor carries.
bool ShapedByForward(const Trace& a, uint32_t ka, const PairVerdict& v) {
  return a.kernels[ka].level == RecordLevel::kOp && a.PhaseOf(a.kernels[ka]) == Phase::kBackward &&
         v.status == PairStatus::kLayoutMismatch && v.cause == Cause::kOrigin;
}

}  // namespace

void AnalyzeRoots(const Trace& a, const Trace& b, size_t top_n, const Tolerance& tolerance, DiffResult* r) {
  AnalyzeRoots(a, DataFlow(a), b, DataFlow(b), top_n, tolerance, r);
}

void AnalyzeRoots(const Trace& a, const DataFlow& flow, const Trace& b, const DataFlow& flow_b, size_t top_n,
                  const Tolerance& tolerance, DiffResult* r) {
  const auto& pairs = r->alignment.pairs;
  Roots& o = r->roots;
  o = {};
  o.descendants.assign(pairs.size(), 0);
  const RunFlow sa(a, flow, r->alignment, true), sb(b, flow_b, r->alignment, false);
  const std::vector<int64_t>& pair_of_a = sa.pair_of;
  std::vector<char> shaped_by_forward(pairs.size(), 0);
  std::optional<uint32_t> forward_layout_root;  // the first, in A's order

  // One pass in A's launch order: the roots each kernel passes on (as
  // origins.cc), and whether a diverged inherited pair is born - which needs
  // the roots its producers pass on, so both are decided together.
  std::vector<std::vector<uint32_t>> from(a.kernels.size());
  for (uint32_t j = 0; j < a.kernels.size(); ++j) {
    const int64_t p = pair_of_a[j];
    if (p >= 0 && r->verdicts[p].status == PairStatus::kBitwiseEqual) continue;
    std::vector<uint32_t> merged;
    bool diverged_producer = false;
    for (uint32_t i : flow.Producers(j)) {
      const int64_t q = pair_of_a[i];
      if (q >= 0 && IsDiverged(r->verdicts[q].status)) diverged_producer = true;
      if (from[i].empty()) continue;
      std::vector<uint32_t> u;
      std::set_union(from[i].begin(), from[i].end(), merged.begin(), merged.end(), std::back_inserter(u));
      if (u.size() > kMaxOriginsPerPair) u.resize(kMaxOriginsPerPair);
      merged.swap(u);
    }
    if (p >= 0) {
      PairVerdict& v = r->verdicts[p];
      // A root's divergence that passes a pair within tolerance on the way
      // (masked_fill with -1e9: the masked entries rule its statistics, so
      // scores 4x larger are within tolerance there) still reaches this one:
      // not born here.
      if (v.cause == Cause::kInherited && IsDiverged(v.status) && merged.empty() && !diverged_producer &&
          !InputBeyondTolerance(sa, pairs[p].a, sb, pairs[p].b, tolerance)) {
        v.cause = Cause::kBorn;
      }
      if (forward_layout_root && ShapedByForward(a, j, v)) {
        shaped_by_forward[p] = 1;
        merged = {*forward_layout_root};
      } else if (IsRoot(v)) {
        if (!forward_layout_root && v.status == PairStatus::kLayoutMismatch && a.PhaseOf(a.kernels[j]) == Phase::kForward) {
          forward_layout_root = static_cast<uint32_t>(p);
        }
        from[j] = {static_cast<uint32_t>(p)};
        continue;
      }
    }
    from[j] = std::move(merged);
    if (p >= 0 && IsDiverged(r->verdicts[p].status)) {
      for (uint32_t root : from[j]) ++o.descendants[root];
    }
  }

  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    if (!IsRoot(r->verdicts[i]) || shaped_by_forward[i]) continue;
    all.push_back(i);
    ++o.count;
    if (!o.first || pairs[i].a < pairs[*o.first].a) o.first = i;
  }

  const size_t n = std::min(top_n, all.size());
  std::partial_sort(all.begin(), all.begin() + n, all.end(), [&](uint32_t x, uint32_t y) {
    if (r->verdicts[x].score != r->verdicts[y].score) return r->verdicts[x].score > r->verdicts[y].score;
    return x < y;
  });
  o.top.assign(all.begin(), all.begin() + n);
}

}  // namespace numtrace::analyzer
