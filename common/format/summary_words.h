// File: common/format/summary_words.h
//
// The words of numtrace-diff's JSON summary (docs/format.md section 2) that
// programs act on, each enumeration from one list: the analyzer writes them
// (analyzer/report/json_summary.cc, steps_report.cc) and the launcher reads
// them back typed (diff_summary.h's DiffSummaryView), so `numtrace twice`
// compares enumerators, never re-typed strings.
//
// Example:
//   VerdictName(Verdict::kIdentical);                        // "identical"
//   EnumFromName<Verdict>(kVerdictNames, "diverged");        // Verdict::kDiverged
//   StepDifferenceName(StepDifference::kKernels);            // "kernels"
//   ReplicaVerdictName(ReplicaVerdict::kConsistent);         // "consistent"
//   PairStatusName(PairStatus::kDiverged);                   // "values" (a pair's `kind`)
//   CauseName(Cause::kBorn);                                 // "born"
#ifndef NUMTRACE_COMMON_FORMAT_SUMMARY_WORDS_H_
#define NUMTRACE_COMMON_FORMAT_SUMMARY_WORDS_H_

#include <cstdint>
#include <string_view>

#include "common/format/enum_list.h"

namespace numtrace {

// The summary's `verdict` (and an origin's `status`), best first.
#define NUMTRACE_VERDICTS(X)              \
  X(kIdentical, "identical")              \
  X(kWithinTolerance, "within_tolerance") \
  X(kDiverged, "diverged")

enum class Verdict : uint8_t { NUMTRACE_VERDICTS(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kVerdictNames[] = {NUMTRACE_VERDICTS(NUMTRACE_ENUM_NAME)};
inline constexpr int kVerdictCount = sizeof(kVerdictNames) / sizeof(kVerdictNames[0]);
inline std::string_view VerdictName(Verdict v) { return kVerdictNames[static_cast<int>(v)]; }

// Status of a pair: the worst over its compared output buffers (role
// out/unknown). Order matters: worse statuses come later. The names of the
// diverged statuses are the summary's `kind` words.
#define NUMTRACE_PAIR_STATUSES(X)                                              \
  X(kBitwiseEqual, "bitwise_equal")     /* same bytes (size and hash)      */ \
  X(kWithinTolerance, "within_tolerance") /* stats differ, score <= 1      */ \
  X(kDiverged, "values")                /* score > 1, or bytes differ      */ \
  X(kNonfiniteMismatch, "nonfinite")    /* NaN/Inf counts differ           */ \
  X(kLayoutMismatch, "layout")          /* corresponding outputs differ in size */

enum class PairStatus : uint8_t { NUMTRACE_PAIR_STATUSES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kPairStatusNames[] = {NUMTRACE_PAIR_STATUSES(NUMTRACE_ENUM_NAME)};
inline constexpr int kPairStatusCount = sizeof(kPairStatusNames) / sizeof(kPairStatusNames[0]);
inline std::string_view PairStatusName(PairStatus s) { return kPairStatusNames[static_cast<int>(s)]; }
inline bool IsDiverged(PairStatus s) { return s >= PairStatus::kDiverged; }

// Why a pair's outputs differ (docs/format.md, `cause`); set by origins.h.
#define NUMTRACE_CAUSES(X)                                                        \
  X(kNone, "none")           /* outputs bitwise equal: nothing to explain      */ \
  X(kOrigin, "origin")       /* every input it read is bitwise equal           */ \
  X(kInherited, "inherited") /* some input it read was beyond tolerance       */ \
  X(kBorn, "born")           /* diverged, inputs differ but within tolerance (or from unpaired ops) */ \
  X(kUnknown, "unknown")     /* inputs not comparable (structure, outputs=all) */

enum class Cause : uint8_t { NUMTRACE_CAUSES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kCauseNames[] = {NUMTRACE_CAUSES(NUMTRACE_ENUM_NAME)};
inline constexpr int kCauseCount = sizeof(kCauseNames) / sizeof(kCauseNames[0]);
inline std::string_view CauseName(Cause c) { return kCauseNames[static_cast<int>(c)]; }

// Watch mode's `steps.first_kind`: how the first differing step differs.
#define NUMTRACE_STEP_DIFFERENCES(X)                                                \
  X(kDigest, "digest")   /* the same kernels, some launch's digest differs */      \
  X(kKernels, "kernels") /* the kernel sequences part (count or names differ) */

enum class StepDifference : uint8_t { NUMTRACE_STEP_DIFFERENCES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kStepDifferenceNames[] = {NUMTRACE_STEP_DIFFERENCES(NUMTRACE_ENUM_NAME)};
inline std::string_view StepDifferenceName(StepDifference d) { return kStepDifferenceNames[static_cast<int>(d)]; }

// The cross-rank summaries' `verdict` (numtrace-diff --across-ranks,
// docs/format.md: every rank against the reference, and the odd rank out).
#define NUMTRACE_REPLICA_VERDICTS(X) \
  X(kConsistent, "consistent")       \
  X(kReplicasDiffer, "replicas_differ")

enum class ReplicaVerdict : uint8_t { NUMTRACE_REPLICA_VERDICTS(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kReplicaVerdictNames[] = {NUMTRACE_REPLICA_VERDICTS(NUMTRACE_ENUM_NAME)};
inline std::string_view ReplicaVerdictName(ReplicaVerdict v) { return kReplicaVerdictNames[static_cast<int>(v)]; }

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_SUMMARY_WORDS_H_
