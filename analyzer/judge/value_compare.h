// File: analyzer/judge/value_compare.h
//
// Judging by what each value's fingerprint (model/trace.h, Fingerprint)
// says. CompareValues dispatches one buffer pair on the fingerprints both
// carry:
//
//   both kBytesHash      -> CompareBuffers (buffer_compare.h)
//   both kHashTensor     -> equal: bitwise_equal; else judged by their printed
//                           statistics when both have them (within_tolerance
//                           at best, the bits differ), else diverged
//   both kPrintedStats   -> ComparePrinted, below
//   nothing in common    -> layout mismatch
//
// ComparePrinted: a log that printed statistics holds no bytes: its "hash"
// is a float64 L1 norm printed to 7 significant digits, and softmax's L1 is
// always its row count, masked_fill(-inf)'s always inf. So equal L1 is not
// equal bytes:
//
//   outputs differ in number, shape or dtype          -> layout mismatch
//   every value the log has for both (L1, L2, Min,
//     Max, Mean) equal, and the same values present   -> bitwise_equal
//   a value non-finite in one run and not the same
//     non-finite value in the other                    -> nonfinite mismatch
//   else each value present in both is scored:
//     |a - b| / (RelativeThreshold(s, dtype, n, rtol) * scale + PrintedRounding(digits) * |value|)
//   where the second term is the rounding of the printed digits (two values
//   each rounded to 7 digits differ by up to 1e-6 relative; a norm printed
//   with all 17 digits of its double, by 1e-16); scale is
//   max(L1) for L1 and Mean (times 1/n), max(L2) for L2, the largest finite
//   |Min|, |Max| of both for Min and Max. score <= 1 -> within_tolerance.
// A value without Shape (dtype and size unknown) is scored the same way on
// what it has, with the user's rtol as its relative threshold.
//
// JudgeLoggedPair judges a pair of records whose values are not byte hashes
// (operators a log printed or hashed): outputs by position; a record without
// outputs (an in-place op that returned nothing) is judged on its input
// values, the only ones the log has for it. Equal outputs from inputs that
// differ are within_tolerance (score 0), not bitwise_equal.
//
// Example:
//   BufferVerdict b = CompareValues(a, ia, b, ib, Tolerance{1e-5, 0});
//   PairVerdict v = JudgeLoggedPair(a, ka, b, kb, Tolerance{1e-5, 0});
#ifndef NUMTRACE_ANALYZER_JUDGE_VALUE_COMPARE_H_
#define NUMTRACE_ANALYZER_JUDGE_VALUE_COMPARE_H_

#include <cstdint>

#include "analyzer/judge/buffer_compare.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// Half a unit in the last significant digit, twice: the rounding noise of a
// difference of two values printed with `digits` significant digits,
// relative to the value (7 digits: 1e-6).
double PrintedRounding(uint8_t digits);

// One buffer of A against one of B (indices into the traces' buffers).
BufferVerdict CompareValues(const Trace& a, uint32_t ia, const Trace& b, uint32_t ib, const Tolerance& tolerance);
// Both buffers kPrintedStats.
BufferVerdict ComparePrinted(const Trace& a, uint32_t ia, const Trace& b, uint32_t ib, const Tolerance& tolerance);

// Whether every buffer of a record carries a byte hash (a kernel of our
// traces), so the record is judged by JudgePair's byte rules.
bool HasByteHashes(const Trace& t, const Kernel& k);

// Whether the values of two traces share some fingerprint (true when either
// holds no buffer): a log's printed norms and byte hashes compare nothing.
bool ValuesComparable(const Trace& a, const Trace& b);

PairVerdict JudgeLoggedPair(const Trace& a, uint32_t ka, const Trace& b, uint32_t kb, const Tolerance& tolerance);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_VALUE_COMPARE_H_
