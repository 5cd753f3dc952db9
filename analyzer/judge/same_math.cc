// File: analyzer/judge/same_math.cc
//
// Same math in another number of operators; see same_math.h.
#include "analyzer/judge/same_math.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/judge/value_compare.h"

namespace numtrace::analyzer {
namespace {

// The buffers a kernel read, in order.
std::vector<uint32_t> ReadBuffers(const RunFlow& s, uint32_t k) {
  std::vector<uint32_t> out;
  const Kernel& kernel = s.trace.kernels[k];
  for (uint32_t bi = kernel.first_buffer; bi < kernel.first_buffer + kernel.buffer_count; ++bi) {
    if (s.flow.Reads(bi)) out.push_back(bi);
  }
  return out;
}

// `end` and the kernels it reads from, back to pairs that do not diverge
// and kernels that read nothing; sorted. Empty when the group would pass kMaxGroupOps.
std::vector<uint32_t> Group(const RunFlow& s, const std::vector<PairVerdict>& verdicts, uint32_t end) {
  std::vector<uint32_t> group{end};
  for (size_t next = 0; next < group.size(); ++next) {
    for (uint32_t p : s.flow.Producers(group[next])) {
      // The group's inputs: what pairs that do not diverge wrote, and what
      // kernels that read nothing made (a divergence born there is no
      // other way of computing the same).
      const int64_t q = s.pair_of[p];
      if ((q >= 0 && !IsDiverged(verdicts[q].status)) || ReadBuffers(s, p).empty()) continue;
      if (std::find(group.begin(), group.end(), p) != group.end()) continue;
      if (group.size() == kMaxGroupOps) return {};
      group.push_back(p);
    }
  }
  std::sort(group.begin(), group.end());
  return group;
}

// The hashes of what a group read from outside it, as a sorted set.
std::vector<uint64_t> GroupInputs(const RunFlow& s, const std::vector<uint32_t>& group) {
  std::vector<uint64_t> out;
  for (uint32_t k : group) {
    for (uint32_t bi : ReadBuffers(s, k)) {
      if (!std::binary_search(group.begin(), group.end(), s.flow.Producer(bi))) out.push_back(s.flow.InputHash(bi));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Whether every pair with a kernel in one group has its partner in the other.
bool Closed(const DiffResult& r, const RunFlow& sa, const std::vector<uint32_t>& ga, const RunFlow& sb,
            const std::vector<uint32_t>& gb) {
  const auto& pairs = r.alignment.pairs;
  for (uint32_t k : ga) {
    if (sa.pair_of[k] >= 0 && !std::binary_search(gb.begin(), gb.end(), pairs[sa.pair_of[k]].b)) return false;
  }
  for (uint32_t k : gb) {
    if (sb.pair_of[k] >= 0 && !std::binary_search(ga.begin(), ga.end(), pairs[sb.pair_of[k]].a)) return false;
  }
  return true;
}

}  // namespace

void JudgeSameMathGroups(const Trace& a, const DataFlow& flow_a, const Trace& b, const DataFlow& flow_b,
                         const Tolerance& tolerance, DiffResult* r) {
  const auto& pairs = r->alignment.pairs;
  const RunFlow sa(a, flow_a, r->alignment, true), sb(b, flow_b, r->alignment, false);
  absl::flat_hash_set<std::pair<uint32_t, uint32_t>> seen;
  for (const KernelPair& q : pairs) {
    if (a.kernels[q.a].level != RecordLevel::kOp || b.kernels[q.b].level != RecordLevel::kOp) continue;
    const std::vector<uint32_t> ia = ReadBuffers(sa, q.a), ib = ReadBuffers(sb, q.b);
    if (ia.size() != ib.size()) continue;
    for (size_t i = 0; i < ia.size(); ++i) {
      const uint32_t x = flow_a.Producer(ia[i]), y = flow_b.Producer(ib[i]);
      if (x == DataFlow::kNoProducer || y == DataFlow::kNoProducer) continue;
      if (sa.pair_of[x] >= 0 && sa.pair_of[x] == sb.pair_of[y]) continue;  // the flows agree here
      if (a.buffers[ia[i]].role != Role::kIn || b.buffers[ib[i]].role != Role::kIn) continue;
      if (!seen.insert({x, y}).second) continue;
      const BufferVerdict end = CompareValues(a, ia[i], b, ib[i], tolerance);
      if (IsDiverged(end.status)) continue;
      const std::vector<uint32_t> ga = Group(sa, r->verdicts, x), gb = Group(sb, r->verdicts, y);
      if (ga.empty() || gb.empty() || !Closed(*r, sa, ga, sb, gb)) continue;
      if (GroupInputs(sa, ga) != GroupInputs(sb, gb)) continue;
      for (uint32_t k : ga) {
        if (sa.pair_of[k] < 0) continue;
        PairVerdict& v = r->verdicts[sa.pair_of[k]];
        if (!IsDiverged(v.status)) continue;
        v.status = std::max(end.status, PairStatus::kWithinTolerance);
        v.score = end.score;
        v.rel_diff = end.rel_diff;
      }
    }
  }
}

}  // namespace numtrace::analyzer
