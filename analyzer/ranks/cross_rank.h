// File: analyzer/ranks/cross_rank.h
//
// The cross-rank check: every rank's trace of ONE run against rank 0's, over
// the kernels they share (paired by the aligner). Data-parallel replicas
// must agree wherever they compute on equal data - after gradients are
// reduced, the optimizer update runs on equal inputs on every rank - so a
// kernel whose inputs are bitwise equal across ranks while its outputs are
// not is a real bug (a nondeterministic kernel, a rank-dependent code path,
// an unsynchronised buffer). Also found: the first NaN/Inf across ranks and
// which rank produced it, and a roll-up per rank.
//
// Inputs are the buffers of role `in`; outputs those of role `out` or
// `unknown`. The analyzer does not keep `pre` stats, so the prior contents
// of a buffer the kernel overwrites are not compared. A pair with no input
// buffer, or whose buffer lists differ in shape, is not judged.
//
// Example:
//   CrossRankResult r = CompareAcrossRanks(traces);   // traces[0] is the reference
//   for (const ReplicaMismatch& m : r.mismatches) use(m.rank, m.seq, m.name);
#ifndef NUMTRACE_ANALYZER_RANKS_CROSS_RANK_H_
#define NUMTRACE_ANALYZER_RANKS_CROSS_RANK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct ReplicaMismatch {
  int64_t rank = 0;
  uint64_t seq = 0;       // in that rank's trace
  uint64_t ref_seq = 0;   // the paired kernel of rank 0
  std::string name;       // demangled
  uint32_t arg = 0;       // the first output argument that differs
};

struct NonfiniteAt {
  int64_t rank = 0;
  uint64_t seq = 0;
  uint64_t order = 0;     // position in rank 0's launch order (its paired seq), for "first"
  std::string name;
  uint32_t arg = 0;
};

struct RankRollup {
  int64_t rank = 0;
  std::string path;
  uint64_t kernels = 0;
  bool truncated = false;
  uint64_t shared = 0;            // kernels paired with rank 0
  uint64_t outputs_equal = 0;     // shared kernels whose outputs are bitwise equal to rank 0's
  uint64_t outputs_differ = 0;
  uint64_t inputs_equal_outputs_differ = 0;
  uint64_t not_judged = 0;        // no input buffer or a different buffer layout
  std::optional<NonfiniteAt> first_nonfinite;
};

struct CrossRankResult {
  std::vector<RankRollup> ranks;            // rank order, [0] the reference
  std::vector<ReplicaMismatch> mismatches;  // by rank 0's order, then rank
  std::optional<NonfiniteAt> first_nonfinite;
};

// `traces` in rank order; traces[0] is the reference (normally rank 0).
CrossRankResult CompareAcrossRanks(const std::vector<const Trace*>& traces);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_RANKS_CROSS_RANK_H_
