#include "analyzer/judge/origins.h"

#include <algorithm>

#include "analyzer/judge/data_flow.h"

namespace numtrace::analyzer {
namespace {

// The hash of what the kernel read from this buffer.
uint64_t InputHash(const Buffer& b) { return b.role == Role::kIn ? b.stats.hash : b.pre_hash; }

// Sorted union of two origin sets, keeping the earliest kMaxOriginsPerPair.
void Merge(const std::vector<uint32_t>& from, std::vector<uint32_t>* into) {
  if (from.empty()) return;
  std::vector<uint32_t> merged;
  merged.reserve(std::min(from.size() + into->size(), kMaxOriginsPerPair));
  std::set_union(from.begin(), from.end(), into->begin(), into->end(), std::back_inserter(merged));
  if (merged.size() > kMaxOriginsPerPair) merged.resize(kMaxOriginsPerPair);
  *into = std::move(merged);
}

}  // namespace

Cause PairCause(const Trace& a, uint32_t ka, const Trace& b, uint32_t kb) {
  auto ba = a.BuffersOf(a.kernels[ka]);
  auto bb = b.BuffersOf(b.kernels[kb]);
  std::vector<const Buffer*> ia, ib;
  for (const Buffer& x : ba) {
    if (x.role == Role::kUnknown) return Cause::kUnknown;  // what it read was not measured
    if (IsRead(x)) ia.push_back(&x);
  }
  for (const Buffer& y : bb) {
    if (y.role == Role::kUnknown) return Cause::kUnknown;
    if (IsRead(y)) ib.push_back(&y);
  }
  if (ia.size() != ib.size()) return Cause::kUnknown;
  bool differs = false;
  for (size_t i = 0; i < ia.size(); ++i) {
    if (ia[i]->bytes != ib[i]->bytes) return Cause::kUnknown;
    differs |= InputHash(*ia[i]) != InputHash(*ib[i]);
  }
  return differs ? Cause::kInherited : Cause::kOrigin;
}

void AnalyzeOrigins(const Trace& a, const Trace& b, size_t top_n, DiffResult* r) {
  const auto& pairs = r->alignment.pairs;
  Origins& o = r->origins;
  o = {};
  o.descendants.assign(pairs.size(), 0);
  std::vector<int64_t> pair_of_a(a.kernels.size(), -1);
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    pair_of_a[pairs[i].a] = i;
    PairVerdict& v = r->verdicts[i];
    v.cause = v.status == PairStatus::kBitwiseEqual ? Cause::kNone : PairCause(a, pairs[i].a, b, pairs[i].b);
    if (v.cause != Cause::kOrigin) continue;
    ++o.count;
    if (IsDiverged(v.status)) ++o.diverged;
    if (!o.first || pairs[i].a < pairs[*o.first].a) o.first = i;
  }

  // Origins each kernel of A passes on, in launch order.
  DataFlow flow(a);
  std::vector<std::vector<uint32_t>> from(a.kernels.size());
  for (uint32_t j = 0; j < a.kernels.size(); ++j) {
    const int64_t p = pair_of_a[j];
    if (p >= 0 && r->verdicts[p].cause == Cause::kNone) continue;  // equal outputs stop it
    if (p >= 0 && r->verdicts[p].cause == Cause::kOrigin) {
      from[j] = {static_cast<uint32_t>(p)};
      continue;
    }
    for (uint32_t i : flow.Producers(j)) Merge(from[i], &from[j]);
    if (p >= 0 && IsDiverged(r->verdicts[p].status)) {
      for (uint32_t origin : from[j]) ++o.descendants[origin];
    }
  }

  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    if (r->verdicts[i].cause == Cause::kOrigin) all.push_back(i);
  }
  const size_t n = std::min(top_n, all.size());
  std::partial_sort(all.begin(), all.begin() + n, all.end(), [&](uint32_t x, uint32_t y) {
    if (r->verdicts[x].score != r->verdicts[y].score) return r->verdicts[x].score > r->verdicts[y].score;
    return x < y;
  });
  o.top.assign(all.begin(), all.begin() + n);

  o.reach.resize(o.top.size());
  for (uint32_t j = 0; j < a.kernels.size(); ++j) {
    const int64_t p = pair_of_a[j];
    if (p < 0 || !IsDiverged(r->verdicts[p].status) || r->verdicts[p].cause == Cause::kOrigin) continue;
    for (size_t t = 0; t < o.top.size(); ++t) {
      if (std::binary_search(from[j].begin(), from[j].end(), o.top[t])) o.reach[t].push_back(static_cast<uint32_t>(p));
    }
  }
  if (r->first_divergence) o.of_first_divergence = from[pairs[*r->first_divergence].a];
}

}  // namespace numtrace::analyzer
