#include "analyzer/judge/origins.h"

#include <algorithm>
#include <cmath>

#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/ranked_pairs.h"

namespace numtrace::analyzer {
namespace {

// Sorted union of two origin sets, keeping the earliest kMaxOriginsPerPair.
void Merge(const std::vector<uint32_t>& from, std::vector<uint32_t>* into) {
  if (from.empty()) return;
  std::vector<uint32_t> merged;
  merged.reserve(std::min(from.size() + into->size(), kMaxOriginsPerPair));
  std::set_union(from.begin(), from.end(), into->begin(), into->end(), std::back_inserter(merged));
  if (merged.size() > kMaxOriginsPerPair) merged.resize(kMaxOriginsPerPair);
  *into = std::move(merged);
}

// A printed input L1 no tensor of a training step has: uninitialised memory
// (a log hashes inductor's out= buffers before the op writes them).
bool IsGarbageNorm(const Buffer& b) { return b.Has(kPrintedStats) && !(std::fabs(b.stats.l1) < 1e30); }

// Whether a kernel read some value whose equality is not bitwise (a printed
// norm): equal there is not equal bytes.
bool ReadsPrintedValue(const Trace& t, const DataFlow& flow, const Kernel& k) {
  for (uint32_t bi = k.first_buffer; bi < k.first_buffer + k.buffer_count; ++bi) {
    const Buffer& b = t.buffers[bi];
    if (flow.Reads(bi) && !b.Has(kBytesHash) && !b.Has(kHashTensor)) return true;
  }
  return false;
}

}  // namespace

Cause PairCause(const Trace& a, const DataFlow& flow_a, uint32_t ka, const Trace& b, const DataFlow& flow_b,
                uint32_t kb) {
  std::vector<uint32_t> ia, ib;  // indices into the traces' buffers
  auto inputs = [](const Trace& t, const DataFlow& flow, uint32_t k, std::vector<uint32_t>* out) {
    const Kernel& kernel = t.kernels[k];
    for (uint32_t bi = kernel.first_buffer; bi < kernel.first_buffer + kernel.buffer_count; ++bi) {
      if (t.buffers[bi].role == Role::kUnknown) return false;  // what it read was not measured
      if (flow.Reads(bi)) out->push_back(bi);
    }
    return true;
  };
  if (!inputs(a, flow_a, ka, &ia) || !inputs(b, flow_b, kb, &ib)) return Cause::kUnknown;
  if (ia.size() != ib.size()) return Cause::kUnknown;
  bool differs = false;
  for (size_t i = 0; i < ia.size(); ++i) {
    if (a.buffers[ia[i]].bytes != b.buffers[ib[i]].bytes) return Cause::kUnknown;
    const bool differ = flow_a.InputHash(ia[i]) != flow_b.InputHash(ib[i]);
    // An input hash of memory the op had not written yet (inductor's out=
    // buffers, hashed before the op) is garbage, not an input.
    if (differ && (IsGarbageNorm(a.buffers[ia[i]]) || IsGarbageNorm(b.buffers[ib[i]]))) {
      return Cause::kUnknown;
    }
    differs |= differ;
  }
  return differs ? Cause::kInherited : Cause::kOrigin;
}

void AnalyzeOrigins(const Trace& a, const Trace& b, size_t top_n, DiffResult* r) {
  AnalyzeOrigins(a, DataFlow(a), b, DataFlow(b), top_n, r);
}

void AnalyzeOrigins(const Trace& a, const DataFlow& flow, const Trace& b, const DataFlow& flow_b, size_t top_n,
                    DiffResult* r) {
  const auto& pairs = r->alignment.pairs;
  Origins& o = r->origins;
  o = {};
  o.descendants.assign(pairs.size(), 0);
  std::vector<int64_t> pair_of_a(a.kernels.size(), -1);
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    pair_of_a[pairs[i].a] = i;
    PairVerdict& v = r->verdicts[i];
    v.cause = v.status == PairStatus::kBitwiseEqual ? Cause::kNone
                                                    : PairCause(a, flow, pairs[i].a, b, flow_b, pairs[i].b);
    // An input "equal" by its printed, rounded L1 (softmax's is its row
    // count) may still differ: its producer's pair says so.
    if (v.cause == Cause::kOrigin && ReadsPrintedValue(a, flow, a.kernels[pairs[i].a])) {
      for (uint32_t producer : flow.Producers(pairs[i].a)) {
        const int64_t p = pair_of_a[producer];
        if (p >= 0 && r->verdicts[p].status != PairStatus::kBitwiseEqual) v.cause = Cause::kInherited;
      }
    }
    if (v.cause == Cause::kOrigin && IsDiverged(v.status)) ++o.diverged;
  }

  // Origins each kernel of A passes on, in launch order.
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
  RankPairs(std::move(all), *r, top_n, &o);

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
