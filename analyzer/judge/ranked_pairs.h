// File: analyzer/judge/ranked_pairs.h
//
// The one ranking of origins and roots (diff_result.h, RankedPairs): given
// the set's members, its count, the member earliest in A's launch order, and
// the `top_n` members of largest output score (ties: lower pair index
// first, so the ranking is the same on every run). origins.cc and roots.cc
// decide who is a member; this decides the order, for both.
//
// Example:
//   std::vector<uint32_t> members = ...;  // pair indices
//   RankPairs(std::move(members), *result, /*top_n=*/10, &result->roots);
#ifndef NUMTRACE_ANALYZER_JUDGE_RANKED_PAIRS_H_
#define NUMTRACE_ANALYZER_JUDGE_RANKED_PAIRS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/judge/diff_result.h"

namespace numtrace::analyzer {

inline void RankPairs(std::vector<uint32_t> members, const DiffResult& r, size_t top_n, RankedPairs* out) {
  const auto& pairs = r.alignment.pairs;
  out->count = members.size();
  out->first.reset();
  for (uint32_t i : members) {
    if (!out->first || pairs[i].a < pairs[*out->first].a) out->first = i;
  }
  const size_t n = std::min(top_n, members.size());
  std::partial_sort(members.begin(), members.begin() + n, members.end(), [&](uint32_t x, uint32_t y) {
    if (r.verdicts[x].score != r.verdicts[y].score) return r.verdicts[x].score > r.verdicts[y].score;
    return x < y;
  });
  members.resize(n);
  out->top = std::move(members);
}

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_RANKED_PAIRS_H_
