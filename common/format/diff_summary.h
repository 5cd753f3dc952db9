// File: common/format/diff_summary.h
//
// The name and version of numtrace-diff's JSON summary (docs/format.md
// section 2), written by analyzer/report/json_summary.cc, and a reader of the
// parts that the launcher uses (`numtrace twice`, `run --dump-first-divergence`): the verdict, the first
// divergence with its `cause`, and `origins` - kernels whose outputs differ
// although every input they read is bitwise equal. For a directory pair the
// per-rank entries of `ranks` are read, each origin keeping its rank.
//
// A summary written before `origins` existed reads fine: has_origins is
// false and the caller says so. The words programs act on (`verdict`, an
// origin's `status`, `steps.first_kind`, the first divergence's `kind` and
// `cause`) are read typed (summary_words.h): a word outside its list is an
// error naming it.
//
// Example:
//   absl::StatusOr<DiffSummaryView> s = ReadDiffSummary("hunt/summary.json");
//   for (const OriginView& o : s->origins) use(o.rank, o.a_seq, o.a_name);
#ifndef NUMTRACE_COMMON_FORMAT_DIFF_SUMMARY_H_
#define NUMTRACE_COMMON_FORMAT_DIFF_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/format/summary_words.h"

namespace numtrace {

// The summary's `format` and `version` fields.
inline constexpr std::string_view kDiffSummaryFormat = "numtrace-diff-summary";
inline constexpr int kDiffSummaryVersion = 1;

// The JSON spellings of the summaries' cross-rank fields (docs/format.md,
// "The odd rank out" and "Sharded summaries"), written and read only
// through these names.
namespace summary_key {
inline constexpr std::string_view kOddRankOut = "odd_rank_out";  // list of departures
inline constexpr std::string_view kOddRankOutTotal = "odd_rank_out_total";  // departures found (the list is capped)
inline constexpr std::string_view kRank = "rank";
inline constexpr std::string_view kStep = "step";
inline constexpr std::string_view kIndex = "index";
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kMajority = "majority";
inline constexpr std::string_view kRanks = "ranks";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kGpu = "gpu";
inline constexpr std::string_view kShard = "shard";   // {"ranks":[...],"of":N}
inline constexpr std::string_view kShardOf = "of";
}  // namespace summary_key


struct OriginView {
  int64_t rank = -1;       // -1 for a file pair
  uint64_t a_seq = 0;
  std::string a_name;
  double score = 0;
  Verdict status = Verdict::kDiverged;  // within_tolerance or diverged
  uint64_t descendants = 0;
};

struct FirstDivergenceView {
  int64_t rank = -1;
  uint64_t a_seq = 0;
  std::string a_name;
  uint64_t b_seq = 0;      // run B's side, for a dump of that launch
  std::string b_name;
  PairStatus kind = PairStatus::kDiverged;  // a diverged status: values, nonfinite, layout
  std::optional<Cause> cause;               // origin, born, inherited, unknown; absent in older summaries
};

// The summary's `steps` (watch mode, docs/format.md section 2).
struct StepsView {
  uint64_t compared = 0;
  std::optional<int64_t> first_differing;
  std::optional<StepDifference> first_kind;  // when a step differs
  uint64_t first_index = 0;
  std::string a_name, b_name;
  std::optional<int64_t> nonfinite_a, nonfinite_b;  // first NaN/Inf step of each side
  std::vector<std::string> notes;
};

struct DiffSummaryView {
  Verdict verdict = Verdict::kIdentical;
  bool has_origins = false;
  uint64_t origin_count = 0;
  std::vector<OriginView> origins;  // the `top` lists of every rank
  std::optional<FirstDivergenceView> first_divergence;
  std::optional<StepsView> steps;
};

// The largest summary read (one of 1,000 ranks with every list full is a
// few MB).
inline constexpr uint64_t kMaxDiffSummaryBytes = uint64_t{256} << 20;

// Through ReadBoundedFile: a regular file of at most
// kMaxDiffSummaryBytes (a fifo or /dev/zero is refused at once).
[[nodiscard]] absl::StatusOr<DiffSummaryView> ReadDiffSummary(const std::string& path);
[[nodiscard]] absl::StatusOr<DiffSummaryView> ParseDiffSummary(const std::string& json,
                                                               const std::string& path_for_messages);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_DIFF_SUMMARY_H_
