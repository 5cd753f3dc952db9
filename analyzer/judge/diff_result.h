// File: analyzer/judge/diff_result.h
//
// The verdict on one aligned pair of traces: per pair status, counts, the
// first divergence and the first non-finite kernel of each run. Produced by
// judge/, rendered by report/ (terminal, JSON summary, HTML).
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

namespace numtrace::analyzer {

// Status of a pair: the worst over its output buffers (role out/unknown).
enum class PairStatus : uint8_t {
  kBitwiseEqual,       // same bytes (hash and size equal)
  kWithinTolerance,    // stats differ, but within rtol/atol
  kDiverged,           // stats differ beyond tolerance ("values")
  kNonfiniteMismatch,  // NaN/Inf counts differ ("nonfinite")
  kLayoutMismatch,     // buffer count, sizes or dtypes differ ("layout")
};
std::string_view PairStatusName(PairStatus s);  // "bitwise_equal", ...
inline bool IsDiverged(PairStatus s) { return s >= PairStatus::kDiverged; }

struct Tolerance {
  double rtol = 1e-5;
  double atol = 0;
};

struct PairVerdict {
  PairStatus status = PairStatus::kBitwiseEqual;
  double rel_diff = 0;     // the largest relative difference over compared buffers
  int32_t a_buffer = -1;   // index within the kernel's buffers of the deciding buffer
  int32_t b_buffer = -1;   // (-1 when none, e.g. kernels without output buffers)
};

enum class Verdict : uint8_t { kIdentical, kWithinTolerance, kDiverged };
std::string_view VerdictName(Verdict v);  // "identical", "within_tolerance", "diverged"

struct DiffCounts {
  uint64_t pairs = 0, bitwise_equal = 0, within_tolerance = 0, diverged = 0;
  uint64_t only_a = 0, only_b = 0;
  std::array<uint64_t, kMatchMethodCount> by_method{};  // indexed by MatchMethod
};

struct DiffResult {
  Alignment alignment;
  std::vector<PairVerdict> verdicts;  // parallel to alignment.pairs
  Tolerance tolerance;
  Verdict verdict = Verdict::kIdentical;
  DiffCounts counts;
  std::optional<uint32_t> first_divergence;  // index into alignment.pairs
  std::optional<uint32_t> first_nonfinite_a;  // kernel index in A
  std::optional<uint32_t> first_nonfinite_b;  // kernel index in B
  std::vector<uint32_t> top_divergences;      // pair indices, largest rel_diff first
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_DIFF_RESULT_H_
