// File: analyzer/ranks/odd_rank.h
//
// The odd rank out (docs/walkthroughs.md section 7, docs/format.md 7.1): data-parallel
// replicas hold the same parameters after their gradient all-reduce, so from
// there on every rank's kernels must produce the same bytes. Watch mode
// digests every launch of every step on every rank; this compares those
// digests across ranks, launch by launch and step by step, and lists each
// place where a minority of ranks departs from a strict majority that agrees
// (same kernel name, same digest). A launch on which no strict majority
// agrees is each rank's own data (the forward pass on its own batch): not an
// outlier. A digest the shim lost (0) takes no part in its launch's vote.
//
// Streaming, in bounded memory: every rank's trace is read through its own
// LineReader, a window of steps at a time (at most kWindowLaunches launches
// buffered per rank, at least one step), the ranks of a window read in
// parallel; steps are paired by step number (a rank without that step sits
// it out). Memory is per rank a 64 KiB reader buffer (grown only for a
// longer line) and the window, whatever the number of steps (about 20 MB
// for 256 ranks, docs/benchmarks.md); kernel records are skipped.
//
// Example:
//   absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, /*threads=*/4);
//   for (const OddRankOut& o : r->odd) use(o.rank, o.step, o.index, o.name);
#ifndef NUMTRACE_ANALYZER_RANKS_ODD_RANK_H_
#define NUMTRACE_ANALYZER_RANKS_ODD_RANK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace numtrace::analyzer {

// One departure (docs/format.md, `odd_rank_out`).
struct OddRankOut {
  int64_t rank = 0;
  int64_t step = 0;
  uint64_t index = 0;      // the launch's index in the step
  std::string name;        // that rank's kernel there (the majority's if it has none)
  uint64_t majority = 0;   // ranks that agree
  uint64_t ranks = 0;      // ranks that took part in the vote
  std::string host, gpu;   // from the trace (run.host, gpu.uuid); empty when unknown
};

struct OddRankRank {
  int64_t rank = 0;
  std::string path, host, gpu;
  uint64_t steps = 0;      // digest records read
  bool truncated = false;
  uint64_t odd = 0;        // its entries in the list (also beyond the cap)
  int64_t first_odd_step = -1;
};

struct OddRankResult {
  std::vector<OddRankRank> ranks;   // in the order given (rank order)
  uint64_t steps_compared = 0;      // steps at least two ranks hold
  int64_t first_step = 0, last_step = -1;
  uint64_t launches_agreeing = 0;   // every voting rank agrees
  uint64_t launches_own_data = 0;   // no strict majority
  uint64_t launches_odd = 0;        // a majority and at least one departure
  uint64_t odd_total = 0;           // departures found; `odd` keeps the first kMaxOddListed
  std::vector<OddRankOut> odd;      // earliest step first, then launch, then rank
  std::vector<std::string> notes;   // what limits the comparison (one line each)
};

// Per rank: launches buffered (12 bytes each; the line reader's buffer is
// read/digest_stream.h's kDigestReaderBytes).
inline constexpr uint64_t kWindowLaunches = 1 << 12;
inline constexpr uint64_t kMaxOddListed = 10000;

// `paths`: one watch trace per rank, in rank order. Errors name the file
// (and line). A rank without a single digest record is an error: agreement
// over nothing is no agreement.
[[nodiscard]] absl::StatusOr<OddRankResult> FindOddRankOut(const std::vector<std::string>& paths, int threads);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_RANKS_ODD_RANK_H_
