// File: analyzer/judge/steps_result.h
//
// What the step finder (step_finder.h) concludes about two watch-mode
// traces; carried by DiffResult and rendered by report/steps_report.h. Its
// own header so that DiffResult needs no trace model.
#ifndef NUMTRACE_ANALYZER_JUDGE_STEPS_RESULT_H_
#define NUMTRACE_ANALYZER_JUDGE_STEPS_RESULT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/string_pool.h"
#include "common/format/enum_list.h"

namespace numtrace::analyzer {

// One compared step, as the HTML strip shows it. Worse comes later.
#define NUMTRACE_STEP_STATES(X)                                             \
  X(kEqual, "equal")         /* same kernels, same hash                   */ \
  X(kDiffers, "differs")     /* same kernels, some digest differs         */ \
  X(kStructure, "kernels")   /* kernel count or names differ              */ \
  X(kNonfinite, "nonfinite") /* a launch left a NaN/Inf (either side)     */

enum class StepState : uint8_t { NUMTRACE_STEP_STATES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kStepStateNames[] = {NUMTRACE_STEP_STATES(NUMTRACE_ENUM_NAME)};
inline std::string_view StepStateName(StepState s) { return kStepStateNames[static_cast<int>(s)]; }

struct StepNonfinite {
  int64_t step = 0;
  uint64_t index = 0;  // launch index in the step
  StringId name = 0;   // in that side's trace
};

struct StepsResult {
  bool a_has_digests = false, b_has_digests = false;
  uint64_t compared = 0;       // steps present on both sides
  uint64_t differing = 0;      // of them, not equal
  // Steps of one side with no step of the same number on the other (past
  // the cut of a trace cut short not counted: that is the cut). Not 0: the
  // comparison is incomplete and never `identical`.
  uint64_t unpaired_a = 0, unpaired_b = 0;
  std::optional<int64_t> first_differing;
  bool first_is_structure = false;  // kernel sequences differ there, not only digests
  // The first differing launch in that step and its digest record on each side.
  uint64_t first_index = 0;
  std::optional<size_t> a_digest, b_digest;  // indices into Trace::digests
  std::optional<StringId> a_name, b_name;    // absent past the end of a shorter step
  std::optional<StepNonfinite> nonfinite_a, nonfinite_b;
  std::vector<int64_t> strip_steps;  // compared steps in A's order
  std::vector<StepState> strip;      // parallel
  std::vector<std::string> notes;    // one line each: what limits the comparison
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_STEPS_RESULT_H_
