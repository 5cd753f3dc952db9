// File: analyzer/report/rank_diff.h
//
// What every report (terminal, JSON summary, HTML) renders: the two traces of
// each rank and the judge's verdict on them. The reports only borrow these
// objects; the caller (cli/) owns the traces and results and keeps them alive
// while a report is being written.
//
// Example:
//   DiffReport report{.path_a = "runA", .path_b = "runB", .per_rank = true};
//   report.ranks.push_back({.rank = 0, .a = &trace_a, .b = &trace_b, .result = &result});
//   std::string json = JsonSummary(report);
#ifndef NUMTRACE_ANALYZER_REPORT_RANK_DIFF_H_
#define NUMTRACE_ANALYZER_REPORT_RANK_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct RankDiff {
  int64_t rank = 0;
  const Trace* a = nullptr;
  const Trace* b = nullptr;
  const DiffResult* result = nullptr;
};

struct DiffReport {
  std::string path_a, path_b;  // as given on the command line (file or directory)
  bool per_rank = false;       // directory inputs: the summary carries `ranks`
  std::vector<RankDiff> ranks;  // ascending rank; exactly one when !per_rank
  // --ranks: the ranks compared (those of `ranks`) of `shard_of` the run has.
  std::optional<uint64_t> shard_of = std::nullopt;
};

// The roll-up over ranks that the top level of every report shows: the worst
// verdict, summed counts, and the rank whose first divergence (and first
// NaN/Inf per run) comes first in launch order.
struct RolledUp {
  Verdict verdict = Verdict::kIdentical;
  DiffCounts counts;
  uint64_t kernels_a = 0, kernels_b = 0;
  bool truncated_a = false, truncated_b = false;
  int first_divergence_rank = -1;   // index into DiffReport::ranks, -1 when none
  int first_nonfinite_a_rank = -1;  // likewise
  int first_nonfinite_b_rank = -1;
};
RolledUp RollUpRanks(const DiffReport& report);

// How complete one side's trace is (docs/format.md, summary `complete`).
struct SideHealth {
  bool truncated = false;   // no footer: the process was cut short
  uint64_t dropped = 0;     // footer `dropped`: records the writer lost
  uint64_t unmeasured = 0;  // kernels that ran in captured steps unmeasured:
                            // footer `unmeasured`, else the notes' counts
  uint64_t missing = 0;     // footer `kernels` beyond the kernel records read
  uint64_t undigested = 0;  // watch mode: launches the shim could not digest
                            // (`lost` of the digest records): compared as unknown
  bool complete() const {
    return !truncated && dropped == 0 && unmeasured == 0 && missing == 0 && undigested == 0;
  }
};
SideHealth HealthOf(const Trace& t);

// False when watch-mode steps of one side have no step of the same number
// on the other (StepsResult::unpaired_*): those steps were not compared.
bool StepsPaired(const RankDiff& rd);

// Why the comparison is incomplete, in one line ("A (runA/rank_0...): cut
// short; B (...): 12 records dropped"), or "" when every side is complete.
std::string IncompleteReason(const DiffReport& report);

// The footer's capture counters of a trace as "name count, ..." ("" if none).
// Counters at 0 only with `zeros` (--verbose): most are 0 on most runs, and
// a line of them hides the ones that are not.
std::string CountersText(const Trace& t, bool zeros = false);

// `kind` of a divergence: "values", "nonfinite" or "layout"; "" when not diverged.
std::string_view DivergenceKind(PairStatus s);

// The order of a kernel in its process: `launch` when the trace has it (it is
// comparable across ranks), else `seq`.
uint64_t LaunchOrder(const Kernel& k);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_RANK_DIFF_H_
