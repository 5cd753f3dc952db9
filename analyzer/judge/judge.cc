#include "analyzer/judge/judge.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "analyzer/judge/buffer_compare.h"
#include "analyzer/judge/value_compare.h"
#include "analyzer/judge/origins.h"
#include "analyzer/judge/roots.h"
#include "analyzer/judge/same_math.h"

namespace numtrace::analyzer {
namespace {

std::vector<int32_t> Outputs(std::span<const Buffer> buffers) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].IsOutput()) out.push_back(static_cast<int32_t>(i));
  }
  return out;
}


// A layout mismatch of the whole pair (no corresponding outputs).
PairVerdict Layout(const std::vector<int32_t>& oa, const std::vector<int32_t>& ob) {
  PairVerdict v;
  v.status = PairStatus::kLayoutMismatch;
  v.score = std::numeric_limits<double>::infinity();
  v.a_buffer = oa.empty() ? -1 : oa[0];
  v.b_buffer = ob.empty() ? -1 : ob[0];
  return v;
}

}  // namespace

PairVerdict JudgePair(const Trace& a, uint32_t ka, const Trace& b, uint32_t kb, MatchMethod method,
                      const Tolerance& tolerance) {
  // Values without a byte hash (a log's printed statistics or hash_tensor)
  // are judged by what they carry.
  if (!HasByteHashes(a, a.kernels[ka]) || !HasByteHashes(b, b.kernels[kb])) {
    return JudgeLoggedPair(a, ka, b, kb, tolerance);
  }
  auto ba = a.BuffersOf(a.kernels[ka]);
  auto bb = b.BuffersOf(b.kernels[kb]);
  std::vector<int32_t> oa = Outputs(ba), ob = Outputs(bb);
  PairVerdict v;
  if (oa.empty() && ob.empty()) return v;  // nothing written: nothing can differ
  const bool strict = method == MatchMethod::kExact || method == MatchMethod::kOverride;
  if (strict) {
    if (oa.size() != ob.size()) return Layout(oa, ob);
    for (size_t i = 0; i < oa.size(); ++i) FoldBufferVerdict(&v, CompareBuffers(ba[oa[i]], bb[ob[i]], tolerance), oa[i], ob[i]);
    return v;
  }
  std::vector<char> used(ob.size(), 0);
  bool any = false;
  for (int32_t ia : oa) {
    int best = -1;
    for (size_t j = 0; j < ob.size(); ++j) {
      const Buffer& x = ba[ia];
      const Buffer& y = bb[ob[j]];
      // Size decides correspondence; dtype labels may disagree (`raw`
      // Triton outputs) and are settled by the bytes in CompareBuffers.
      if (used[j] || x.bytes != y.bytes) continue;
      if (best < 0 || (x.stats.hash == y.stats.hash && bb[ob[best]].stats.hash != x.stats.hash)) best = static_cast<int>(j);
    }
    if (best < 0) continue;
    used[best] = 1;
    any = true;
    FoldBufferVerdict(&v, CompareBuffers(ba[ia], bb[ob[best]], tolerance), ia, ob[best]);
  }
  if (!any) return Layout(oa, ob);
  return v;
}

DiffResult Judge(const Trace& a, const Trace& b, Alignment alignment, const JudgeOptions& options) {
  DiffResult r;
  r.tolerance = options.tolerance;
  r.alignment = std::move(alignment);
  const auto& pairs = r.alignment.pairs;
  r.verdicts.reserve(pairs.size());
  for (const KernelPair& p : pairs) {
    r.verdicts.push_back(JudgePair(a, p.a, b, p.b, p.method, options.tolerance));
  }
  for (uint32_t i = 0; i < a.kernels.size(); ++i) {
    if (a.HasNonfiniteOutput(a.kernels[i])) { r.first_nonfinite_a = i; break; }
  }
  for (uint32_t i = 0; i < b.kernels.size(); ++i) {
    if (b.HasNonfiniteOutput(b.kernels[i])) { r.first_nonfinite_b = i; break; }
  }
  const DataFlow flow_a(a), flow_b(b);
  JudgeSameMathGroups(a, flow_a, b, flow_b, options.tolerance, &r);
  TallyVerdicts(&r, options.top_n);
  AnalyzeOrigins(a, flow_a, b, flow_b, options.top_n, &r);
  AnalyzeRoots(a, flow_a, b, flow_b, options.top_n, options.tolerance, &r);
  r.environment = CompareEnvironments(a, b);
  return r;
}

void TallyVerdicts(DiffResult* r, size_t top_n) {
  const auto& pairs = r->alignment.pairs;
  DiffCounts& c = r->counts;
  c = {};
  r->first_divergence.reset();
  std::vector<uint32_t> diverged;
  for (uint32_t i = 0; i < r->verdicts.size(); ++i) {
    const PairStatus s = r->verdicts[i].status;
    c.by_method[static_cast<int>(pairs[i].method)]++;
    if (s == PairStatus::kBitwiseEqual) {
      c.bitwise_equal++;
    } else if (s == PairStatus::kWithinTolerance) {
      c.within_tolerance++;
    } else {
      c.diverged++;
      diverged.push_back(i);
      // Pairs are sorted by a, so the first one met is the earliest in A.
      if (!r->first_divergence) r->first_divergence = i;
    }
  }
  c.pairs = pairs.size();
  c.only_a = r->alignment.only_a.size();
  c.only_b = r->alignment.only_b.size();

  const size_t n = std::min(top_n, diverged.size());
  std::partial_sort(diverged.begin(), diverged.begin() + n, diverged.end(), [&](uint32_t x, uint32_t y) {
    if (r->verdicts[x].score != r->verdicts[y].score) return r->verdicts[x].score > r->verdicts[y].score;
    return x < y;
  });
  r->top_divergences.assign(diverged.begin(), diverged.begin() + n);

  if (c.diverged > 0) {
    r->verdict = Verdict::kDiverged;
  } else if (c.within_tolerance > 0 || c.only_a > 0 || c.only_b > 0) {
    r->verdict = Verdict::kWithinTolerance;
  } else {
    r->verdict = Verdict::kIdentical;
  }
}

}  // namespace numtrace::analyzer
