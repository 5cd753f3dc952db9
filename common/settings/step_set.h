// File: common/settings/step_set.h
//
// A set of step numbers, as NUMTRACE_STEPS (`numtrace run --steps`) gives
// it: "2", "2,5", "3-4", "1,3-4", "all" (or "*"), "none" (watch mode:
// digests only, no step captured in full). The step tracker asks it per
// step; the trace header lists it (capture.steps) and the selector text
// prints it back in the same form.
//
// Example:
//   std::optional<StepSet> s = StepSet::Parse("1,3-4");
//   s->Contains(3);    // true
//   s->Last();         // 4: nothing after step 4 is captured
//   s->ToString();     // "1,3-4"
#ifndef NUMTRACE_COMMON_SETTINGS_STEP_SET_H_
#define NUMTRACE_COMMON_SETTINGS_STEP_SET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numtrace::settings {

class StepSet {
 public:
  static StepSet All() { StepSet s; s.all_ = true; return s; }
  static StepSet Only(int64_t step) { StepSet s; s.ranges_.emplace_back(step, step); return s; }
  // nullopt when `text` (blanks around each item ignored) is none of the forms above.
  [[nodiscard]] static std::optional<StepSet> Parse(std::string_view text);
  bool all() const { return all_; }
  bool Contains(int64_t step) const;
  // The largest listed step (INT64_MAX for "all"): nothing after it is captured.
  int64_t Last() const;
  // Explicit step numbers for the trace header (empty for "all"; ranges expanded up to 4096 entries).
  std::vector<int64_t> Listed() const;
  std::string ToString() const;

 private:
  bool all_ = false;
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // inclusive, sorted
};

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_STEP_SET_H_
