#include "analyzer/judge/roots.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "analyzer/judge/buffer_compare.h"
#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/value_compare.h"
#include "analyzer/judge/origins.h"
#include "analyzer/judge/ranked_pairs.h"

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

// Whether an operator record read `buffer` from an op that has no partner,
// or from a pair that only views what such an op wrote (`views_unpaired`,
// by pair: a transpose of B's bf16 cast).
bool FromUnpairedOp(const RunFlow& s, uint32_t k, uint32_t buffer, const std::vector<char>& views_unpaired) {
  const uint32_t producer = s.flow.Producer(buffer);
  if (s.trace.kernels[k].level != RecordLevel::kOp || producer == DataFlow::kNoProducer) return false;
  return s.pair_of[producer] < 0 || views_unpaired[s.pair_of[producer]];
}

// Whether an operator's outputs are views of what it read (the same
// storage, docs/format.md): it computes nothing, so no divergence is born
// in it.
bool IsView(const Trace& t, uint32_t k) {
  const Kernel& kernel = t.kernels[k];
  if (kernel.level != RecordLevel::kOp) return false;
  auto buffers = t.BuffersOf(kernel);
  bool any = false;
  for (const Buffer& out : buffers) {
    if (out.role != Role::kOut) continue;
    if (out.has_pre) return false;  // written in place
    if (std::none_of(buffers.begin(), buffers.end(),
                     [&](const Buffer& in) { return in.role == Role::kIn && in.addr == out.addr; })) {
      return false;
    }
    any = true;
  }
  return any;
}

// Whether some input buffer, compared with its partner by position, is
// beyond tolerance. Buffers without statistics (n = 0 in our traces) say
// nothing here; their producers do. At operator level an input written by
// an op only one run ran (A's dropout, gone from B's model in eval()) does
// not count either: the divergence is born in that op, which has no partner
// to be named at, and the first pair reading what it wrote stands for it.
bool InputBeyondTolerance(const RunFlow& sa, uint32_t ka, const RunFlow& sb, uint32_t kb, const Tolerance& tolerance,
                          const std::vector<char>& views_unpaired) {
  const Trace& a = sa.trace;
  const Trace& b = sb.trace;
  const std::vector<uint32_t> ia = Inputs(a, ka), ib = Inputs(b, kb);
  for (size_t i = 0; i < std::min(ia.size(), ib.size()); ++i) {
    const Buffer& x = a.buffers[ia[i]];
    const Buffer& y = b.buffers[ib[i]];
    if (x.stats.hash == y.stats.hash) continue;
    if (FromUnpairedOp(sa, ka, ia[i], views_unpaired) || FromUnpairedOp(sb, kb, ib[i], views_unpaired)) continue;
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
  std::vector<char> shaped_by_forward(pairs.size(), 0), views_unpaired(pairs.size(), 0);
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
      if (q >= 0 && IsDiverged(r->verdicts[q].status) && !views_unpaired[q]) diverged_producer = true;
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
      // not born here. At operator level inputs of another size (a bf16
      // cast's output against the f32 tensor) make the cause unknown;
      // written by an op only one run ran, they too leave the pair born.
      const bool op_unknown = v.cause == Cause::kUnknown && a.kernels[j].level == RecordLevel::kOp;
      const bool born = (v.cause == Cause::kInherited || op_unknown) && IsDiverged(v.status) && merged.empty() &&
                        !diverged_producer &&
                        !InputBeyondTolerance(sa, pairs[p].a, sb, pairs[p].b, tolerance, views_unpaired);
      if (born && IsView(a, j)) {
        views_unpaired[p] = 1;  // passes on what it views
      } else if (born) {
        v.cause = Cause::kBorn;
      }
      if (forward_layout_root && ShapedByForward(a, j, v)) {
        shaped_by_forward[p] = 1;
        merged = {*forward_layout_root};
      } else if (IsRoot(v)) {
        if (!forward_layout_root && v.status == PairStatus::kLayoutMismatch &&
            a.PhaseOf(a.kernels[j]) == Phase::kForward) {
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
  }
  RankPairs(std::move(all), *r, top_n, &o);
}

}  // namespace numtrace::analyzer
