// File: analyzer/judge/debugmode_compare.h
//
// The verdict on a pair of torchtitan DebugMode blocks (both traces read by
// read/debugmode_reader.h). A log holds no bytes: its "hash" is the float64
// L1 norm printed to 7 significant digits, and softmax's L1 is always its
// row count, masked_fill(-inf)'s always inf. So equal L1 is not equal bytes:
//
//   outputs differ in number, shape or dtype          -> layout mismatch
//   every value the log has for both (L1, L2, Min,
//     Max, Mean) equal, and the same values present   -> bitwise_equal
//   a value non-finite in one run and not the same
//     non-finite value in the other                    -> nonfinite mismatch
//   else each value present in both is scored:
//     |a - b| / (RelativeThreshold(s, dtype, n, rtol) * scale + kPrintedDigits * |value|)
//   where the second term is the rounding of the printed digits (two values
//   each rounded to 7 digits differ by up to 1e-6 relative); scale is
//   max(L1) for L1 and Mean (times 1/n), max(L2) for L2, the largest finite
//   |Min|, |Max| of both for Min and Max. score <= 1 -> within_tolerance.
// A hash-only block (no Shape: dtype and size unknown) is scored the same way
// on the hashes it has, with the user's rtol as its relative threshold. A
// block without outputs (an in-place op that returned nothing) is judged on
// its input hashes, the only values the log has for it. Equal outputs from
// inputs whose hashes differ are within_tolerance (score 0), not bitwise_equal.
//
// Example:
//   PairVerdict v = JudgeDebugModePair(a, ka, b, kb, Tolerance{1e-5, 0});
#ifndef NUMTRACE_ANALYZER_JUDGE_DEBUGMODE_COMPARE_H_
#define NUMTRACE_ANALYZER_JUDGE_DEBUGMODE_COMPARE_H_

#include <cstdint>

#include "analyzer/judge/buffer_compare.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// Half a unit in the 7th significant digit, twice: the rounding noise of a
// difference of two printed values, relative to the value.
inline constexpr double kPrintedDigits = 1e-6;

inline bool IsDebugModePair(const Trace& a, const Trace& b) {
  return a.source == TraceSource::kDebugMode && b.source == TraceSource::kDebugMode;
}

// One buffer of A against one of B (indices into the traces' buffers).
BufferVerdict CompareLogged(const Trace& a, uint32_t ia, const Trace& b, uint32_t ib, const Tolerance& tolerance);

PairVerdict JudgeDebugModePair(const Trace& a, uint32_t ka, const Trace& b, uint32_t kb, const Tolerance& tolerance);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_DEBUGMODE_COMPARE_H_
