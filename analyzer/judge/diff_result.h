// File: analyzer/judge/diff_result.h
//
// The verdict on one aligned pair of traces: per pair status, score and
// cause, counts, the first divergence, where the differences are born
// (origins) and the first non-finite kernel of each run. Produced by judge/
// (with origins/ for causes), rendered by report/ (terminal, JSON, HTML).
//
// Statuses and causes are each defined by ONE list below (name and JSON
// spelling), verdicts by common/format/summary_words.h; reports take their
// words and column order from these lists.
//
// Example:
//   DiffResult r = Judge(a, b, Align(a, b));  // analyzer/judge/judge.h
//   VerdictName(r.verdict);                   // "diverged"
//   PairStatusName(r.verdicts[*r.first_divergence].status);  // "values"
#ifndef NUMTRACE_ANALYZER_JUDGE_DIFF_RESULT_H_
#define NUMTRACE_ANALYZER_JUDGE_DIFF_RESULT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/align/alignment.h"
#include "common/format/summary_words.h"
#include "analyzer/judge/environment_diff.h"
#include "analyzer/judge/steps_result.h"
#include "common/format/enum_list.h"

namespace numtrace::analyzer {

// PairStatus and Cause, the summary's `kind` and `cause` words: common/format/summary_words.h.

// Verdict (identical, within_tolerance, diverged) is a summary word the
// launcher reads back: its list is common/format/summary_words.h.

// --rtol/--atol (docs/diffing.md): rtol is the least relative threshold of
// every statistic (the calibrated per-dtype thresholds apply above it), atol
// adds absolute slack.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 0;
};

struct PairVerdict {
  PairStatus status = PairStatus::kBitwiseEqual;
  Cause cause = Cause::kNone;  // set by origins.h for pairs that are not bitwise equal
  double rel_diff = 0;     // the largest relative difference over compared buffers
  // The worst statistic's difference over its threshold (1 = tolerance line);
  // infinite when no threshold applies (bytes of integer/raw buffers, NaN
  // counts, sizes differ). 0 for bitwise-equal pairs.
  double score = 0;
  int32_t a_buffer = -1;   // index within the kernel's buffers of the deciding buffer
  int32_t b_buffer = -1;   // (-1 when none, e.g. kernels without output buffers)
};

struct DiffCounts {
  uint64_t pairs = 0, bitwise_equal = 0, within_tolerance = 0, diverged = 0;
  uint64_t only_a = 0, only_b = 0;
  std::array<uint64_t, kMatchMethodCount> by_method{};  // indexed by MatchMethod
};

// Pairs where differences start, ranked two ways: the earliest in A's
// launch order (`first`, what to read first) and the largest output scores
// (`top`, what matters most). Origins and roots are each such a set
// (ranked_pairs.h ranks both; the report writes both through one writer).
struct RankedPairs {
  uint64_t count = 0;             // pairs in the set
  std::optional<uint32_t> first;  // pair index of the one earliest in A
  std::vector<uint32_t> top;      // pair indices, largest score first
  // Per pair (parallel to alignment.pairs): for a member, how many later
  // diverged pairs its difference flows to; 0 for every other pair.
  std::vector<uint32_t> descendants;
};

// Where the runs' differences are born (origins.h fills it): pairs with
// cause origin.
struct Origins : RankedPairs {
  uint64_t diverged = 0;  // of them, beyond tolerance
  // For each entry of `top`: the pair indices its difference reaches.
  std::vector<std::vector<uint32_t>> reach;
  // The origins the first divergence flows from (itself when it is one).
  std::vector<uint32_t> of_first_divergence;
};

// Where the divergences beyond tolerance are born (roots.h fills it): every
// diverged pair whose cause is origin or born.
struct Roots : RankedPairs {};

struct DiffResult {
  Alignment alignment;
  std::vector<PairVerdict> verdicts;  // parallel to alignment.pairs
  Tolerance tolerance;
  Verdict verdict = Verdict::kIdentical;
  DiffCounts counts;
  std::optional<uint32_t> first_divergence;  // index into alignment.pairs
  std::optional<uint32_t> first_nonfinite_a;  // kernel index in A
  std::optional<uint32_t> first_nonfinite_b;  // kernel index in B
  std::vector<uint32_t> top_divergences;      // pair indices, largest score first
  Origins origins;                            // where the differences are born
  std::optional<StepsResult> steps;           // watch mode: which step first differs (step_finder.h)
  Roots roots;                                // where the divergences beyond tolerance are born
  std::optional<EnvironmentDiff> environment; // what else differed (nullopt: neither side recorded one)
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_DIFF_RESULT_H_
