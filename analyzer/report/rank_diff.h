// File: analyzer/report/rank_diff.h
//
// What every report (terminal, JSON summary, HTML) renders: the two traces of
// each rank and the judge's verdict on them, and the one roll-up over ranks
// (RollUp) the top level of each shows. The reports only borrow these
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

#include "absl/functional/function_ref.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"
#include "common/format/json_writer.h"

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

// ---- the roll-up over ranks: one computation for every report ----
//
// What the roll-up decides by, per rank. It is read from a rank's diff
// (FactsOf: the terminal summary, the HTML report, the exit status) or from
// the rank's entry of a summary (summary_merge.cc: the JSON summary of a
// directory and `numtrace merge` of shards); RollUp alone decides, so every
// report names the same rank, step and environment.
struct SideFacts {       // the summary's `a` or `b`, less its path
  std::string label;
  uint64_t kernels = 0;
  bool truncated = false;
  uint64_t dropped = 0, unmeasured = 0, undigested = 0;
};
struct ListFacts {  // `origins` or `roots`
  uint64_t count = 0, diverged = 0;  // `diverged`: origins only
  std::optional<uint64_t> first;     // launch order (`order`) of `first`
  std::vector<double> top_scores;    // of `top`, in its order; +inf where null (not finite)
};
struct RankFacts {
  Verdict verdict = Verdict::kIdentical;
  bool complete = true;  // the summary's `complete`
  SideFacts a, b;
  DiffCounts counts;
  // Launch orders (LaunchOrder, the summary's `order`) of each first.
  std::optional<uint64_t> first_divergence, first_nonfinite_a, first_nonfinite_b;
  ListFacts origins, roots;
  bool has_steps = false;                       // watch mode: a steps result
  std::optional<int64_t> first_differing_step;  // its first differing step
  bool has_environment = false;
};
RankFacts FactsOf(const RankDiff& rd);
SideFacts SideOf(const Trace& t);

// The rules: the worst verdict; complete when every rank is; counts and
// health summed, a side's label the ranks' common one else ""; the first
// divergence, first NaN/Inf per run, origins.first and roots.first by launch
// order, ties to the lower rank; the `top` lists by score across ranks
// (stable: ties keep rank order), as long as the longest rank's; `steps` of
// the rank whose first differing step comes first, else the first rank with
// a steps result; `environment` of the first divergence's rank, else of the
// first rank that has one. Ranks are indices into the facts given.
struct RankedEntry {
  int rank;      // index of the rank
  size_t entry;  // index into that rank's `top`
};
struct RolledUpList {
  uint64_t count = 0, diverged = 0;
  int first_rank = -1;  // the rank whose `first` is the roll-up's, -1 when none
  std::vector<RankedEntry> top;
};
struct RolledUp {
  Verdict verdict = Verdict::kIdentical;
  bool complete = true;
  SideFacts a, b;
  DiffCounts counts;
  int first_divergence_rank = -1;  // -1 when none
  int first_nonfinite_a_rank = -1;
  int first_nonfinite_b_rank = -1;
  int steps_rank = -1;
  int environment_rank = -1;
  RolledUpList origins, roots;
};
RolledUp RollUp(const std::vector<RankFacts>& ranks);
// RollUp of the report's ranks (indices into DiffReport::ranks).
RolledUp RollUpRanks(const DiffReport& report);

// The summary's `a` or `b` object (the value; the caller writes the key),
// with the footer's `counters` of `counters` (one rank's side) if given.
void WriteSideJson(std::string_view path, const SideFacts& s, const Trace* counters, JsonWriter& w);
// The summary's `counts` and `match_methods` of `c` (one spelling for every
// summary, and the names `numtrace merge` reads them back by).
void WriteCountsJson(const DiffCounts& c, JsonWriter& w);
// Adds `value` to the count `key` names, of `counts` (key "counts") or of
// `match_methods` (methods); false for a name neither list has.
bool AddCount(std::string_view key, bool methods, uint64_t value, DiffCounts& c);

// False when watch-mode steps of one side have no step of the same number
// on the other (StepsResult::unpaired_*): those steps were not compared.
bool StepsPaired(const RankDiff& rd);
// The summary's `complete` of one rank: both sides complete, steps paired.
bool RankComplete(const RankDiff& rd);

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

// Pair `i` of a rank's diff: the alignment's pair, the judge's verdict on it
// and both kernels, as every report reads them.
struct PairRef {
  const KernelPair& pair;
  const PairVerdict& verdict;
  const Kernel& a;
  const Kernel& b;
};
PairRef PairAt(const RankDiff& rd, uint32_t i);

// How the terminal and the lead sentence name a record, plain text (not
// escaped): an operator by its key (module path and op), not the op alone;
// a kernel by its short name (templates elided, common/names/normalize.h).
std::string KernelLabel(const Trace& t, const Kernel& k);

// How the summary's entries of a pair (first divergence, origins, roots)
// begin: a_seq, b_seq, `order` (launch order: by it the roll-up over ranks
// and `numtrace merge` pick the first), a_name, b_name.
void WritePairNames(const RankDiff& rd, const PairRef& p, JsonWriter& w);

// The summary's `origins` and `roots` (one shape, docs/format.md section 3):
// "KEY":{"count":N[,"diverged":D],"first":ENTRY|null,"top":[ENTRY...]}, an
// ENTRY being WritePairNames, then what the set says of its pair
// (`verdict_fields`), then descendants and provenance.
void WriteRankedPairs(const RankDiff& rd, std::string_view key, const RankedPairs& set,
                      std::optional<uint64_t> diverged,
                      absl::FunctionRef<void(const PairVerdict&, JsonWriter&)> verdict_fields, JsonWriter& w);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_RANK_DIFF_H_
