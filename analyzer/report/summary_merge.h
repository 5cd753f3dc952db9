// File: analyzer/report/summary_merge.h
//
// The top level of a directory summary, rolled up from its per-rank entries
// - by JsonSummary for a diff of two directories and by `numtrace merge`
// for shard summaries (`numtrace diff A B --ranks LIST`, marked
// `shard`): one roll-up, so a merge of shards is by construction the summary
// one diff of the whole run writes. Only entries are read: every rank's
// entry of `ranks` is the full diff's entry for that rank. Each entry is
// read into the facts RollUp (rank_diff.h) decides by - the one roll-up the
// terminal summary and the HTML report take too - and the top level is the
// text of the entries' parts it picks: worst verdict, summed counts and
// health, the first divergence, first NaN/Inf, origins.first and
// roots.first by the `order` (launch order) their entries carry, ties to
// the lower rank; the `top` lists by score, as long as the longest rank's;
// `steps` of the rank whose first differing step comes first;
// `environment` of the first divergence's rank, else of the first rank that
// has one. Merged shards equal the full diff byte for byte
// (test/analyzer/cli/summary_merge_test.cc).
//
// Refused, naming the file: a file that is not a summary, one without
// `shard`, shards of a different run (`of`, A or B path, tolerance), a rank
// in two shards, an entry written before `order` existed, a count name the
// summary does not have. Ranks no shard covers are not an error: the merged
// summary is then itself a shard of the ranks it has (`shard`) with
// `complete` false, and `missing` says which.
//
// Example:
//   absl::StatusOr<MergedSummary> m = MergeShardSummaries({{"s0.json", text0}, {"s1.json", text1}});
//   if (m.ok()) write(m->json);  // m->verdict, m->missing
#ifndef NUMTRACE_ANALYZER_REPORT_SUMMARY_MERGE_H_
#define NUMTRACE_ANALYZER_REPORT_SUMMARY_MERGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/judge/diff_result.h"

namespace numtrace::analyzer {

struct ShardText {
  std::string path;  // for messages
  std::string json;  // the summary's text
};

struct MergedSummary {
  std::string json;              // the merged summary, one line and '\n'
  Verdict verdict = Verdict::kIdentical;
  bool complete = true;          // the merged `complete`
  uint64_t of = 0;               // ranks of the run
  // Ranks of 0..of-1 that no shard covers, as inclusive ranges (first, last).
  std::vector<std::pair<uint64_t, uint64_t>> missing;
};

[[nodiscard]] absl::StatusOr<MergedSummary> MergeShardSummaries(const std::vector<ShardText>& shards);

// JsonSummary's directory summary: `entries` are the per-rank summaries (with
// `rank`, ascending) it wrote; `shard_of` marks a --ranks shard. An error
// only if an entry does not read back (a bug, not an input).
[[nodiscard]] absl::StatusOr<std::string> RollUpRankEntries(std::string_view path_a, std::string_view path_b,
                                                            const std::vector<std::string>& entries,
                                                            std::optional<uint64_t> shard_of);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_SUMMARY_MERGE_H_
