// File: analyzer/judge/tolerance_model.h
//
// How far a statistic may move before a buffer counts as diverged: the
// thresholds calibrated by the noise study (test/analyzer/judge/
// noise_study_test.cc, table in docs/diffing.md). Two families, because their
// noise differs by orders of magnitude:
//
//   aggregates (l2, l1, and sum measured against l1): rounding noise of single
//     elements averages out over many elements; what remains is a shared
//     scalar rounded differently (a norm's rstd, a scale) - at most about one
//     unit roundoff u of the dtype. Threshold, relative to the scale:
//       kAggregateUnits * u + kSmallBufferUnits * u / sqrt(n)
//     (bf16, n = 1024: 1.625 u = 0.63%, so a uniform 1% change scores 1.6).
//   extremes (min, max, relative to the largest magnitude of both runs): one
//     element rounded differently a few times along a chain of ops:
//       kExtremeUnits * u.
//
// u: f64 2^-53, f32 2^-24, f16 2^-11, bf16 2^-8, f8e4m3 2^-4, f8e5m2 2^-3.
// The user's rtol is a floor under every relative threshold (--rtol 0 leaves
// the calibrated model alone; a larger rtol loosens every statistic); atol is
// absolute slack added on top (atol*sqrt(n) for l2, atol*n for l1 and sum,
// atol for min and max).
//
// Example:
//   RelativeThreshold(Statistic::kL1, DType::kBF16, 1024, 1e-5);  // ~0.0063
#ifndef NUMTRACE_ANALYZER_JUDGE_TOLERANCE_MODEL_H_
#define NUMTRACE_ANALYZER_JUDGE_TOLERANCE_MODEL_H_

#include <cstdint>
#include <string_view>

#include "common/format/enum_list.h"
#include "common/format/dtype.h"

namespace numtrace::analyzer {

#define NUMTRACE_STATISTICS(X) \
  X(kL2, "l2")                 \
  X(kL1, "l1")                 \
  X(kSum, "sum")               \
  X(kMin, "min")               \
  X(kMax, "max")

enum class Statistic : uint8_t { NUMTRACE_STATISTICS(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kStatisticNames[] = {NUMTRACE_STATISTICS(NUMTRACE_ENUM_NAME)};
inline constexpr int kStatisticCount = sizeof(kStatisticNames) / sizeof(kStatisticNames[0]);

inline constexpr double kAggregateUnits = 1.5;
inline constexpr double kSmallBufferUnits = 4.0;
inline constexpr double kExtremeUnits = 4.0;

// Unit roundoff of a float dtype; 0 for integers, bool and raw.
double UnitRoundoff(DType dtype);

inline bool IsAggregate(Statistic s) { return s <= Statistic::kSum; }

// The relative threshold of statistic `s` of an n-element buffer of `dtype`
// under the user's rtol floor.
double RelativeThreshold(Statistic s, DType dtype, uint64_t n, double rtol);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_TOLERANCE_MODEL_H_
