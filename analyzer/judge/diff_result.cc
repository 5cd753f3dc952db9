#include "analyzer/judge/diff_result.h"

namespace numtrace::analyzer {

std::string_view PairStatusName(PairStatus s) {
  switch (s) {
    case PairStatus::kBitwiseEqual: return "bitwise_equal";
    case PairStatus::kWithinTolerance: return "within_tolerance";
    // The spec's `kind` words for the diverged statuses (diff_result.h).
    case PairStatus::kDiverged: return "values";
    case PairStatus::kNonfiniteMismatch: return "nonfinite";
    case PairStatus::kLayoutMismatch: return "layout";
  }
  return "unknown";
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kIdentical: return "identical";
    case Verdict::kWithinTolerance: return "within_tolerance";
    case Verdict::kDiverged: return "diverged";
  }
  return "unknown";
}

}  // namespace numtrace::analyzer
