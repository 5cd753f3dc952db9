// File: shim/engine/step_tracker.h
//
// Decides, per kernel launch, which training step it belongs to and whether
// that step is one we capture, for every NUMTRACE_STEP_MODE; then applies the
// launch window (NUMTRACE_LAUNCH_SKIP / NUMTRACE_LAUNCH_COUNT, counted over
// launches that are in a selected step and pass the kernel filters, like
// compute-sanitizer counts launches that match --kernel-name).
//
// The launch path (OnLaunch) is one relaxed fetch_add plus a few relaxed
// loads: no lock, no allocation. Markers (mark, ranges) are rare and take a
// mutex. Steps are global to the process: a marker from any thread moves
// every thread to the next step, as a training loop's step boundary does.
//
// Example (mark mode, NUMTRACE_STEPS=1):
//   StepTracker t(config);
//   t.OnLaunch(false).step;   // 0 (not selected)
//   t.OnStepMark();           // step 0 ended
//   t.OnLaunch(false).selected;  // true: step 1
#ifndef NUMTRACE_SHIM_ENGINE_STEP_TRACKER_H_
#define NUMTRACE_SHIM_ENGINE_STEP_TRACKER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "common/settings/config.h"

namespace numtrace::shim {

struct LaunchDecision {
  uint64_t launch = 0;    // process-wide launch index, 0-based
  int64_t step = -1;      // -1: outside every step (range modes between ranges)
  bool selected = false;  // the step is in NUMTRACE_STEPS (filters and window not yet applied)
};

class StepTracker {
 public:
  explicit StepTracker(const settings::Config& config);

  // Counts one launch. `starts_step`: the kernel matches the kernel:REGEX step
  // mode (the caller looks that up in its per-function cache; false otherwise).
  // Same as Count(Decide(starts_step)).
  LaunchDecision OnLaunch(bool starts_step) { return Count(Decide(starts_step)); }

  // The two halves of OnLaunch, so the engine can give captured launches
  // their numbers under the lock that orders its records: Decide says which
  // step a launch about to be counted falls into (moving kernel mode to its
  // next step when `starts_step`); Count numbers it. In launches:N mode the
  // step is settled by the number Count gives.
  LaunchDecision Decide(bool starts_step);
  LaunchDecision Count(LaunchDecision d);

  // For a selected launch that passed the kernel filters: true when it lies in
  // the launch window and is to be captured.
  bool TakeWindowSlot();

  // Markers. Each returns the step that just ended, or -1 (none, or the marker
  // does not belong to the configured mode).
  int64_t OnStepMark() { return OnStepMark(-1).ended; }
  // A step mark that carries the job's own number for the step that begins
  // (numtrace_mark_step_to: the optimizer's step count, so a run resumed from
  // a checkpoint numbers its steps as the run that saved it did). `next` is
  // taken when it lies ahead of the step that ends (otherwise, and for -1,
  // the next step is the ended one + 1, as a plain mark). The ended step is
  // then known to be the job's `next - 1`: `ended_as` says so when that
  // differs from the number its launches were counted under and none of them
  // could have been captured in full (the step was not selected); otherwise
  // ended_as == ended. The hooks' provenance mirrors this rule.
  struct Mark {
    int64_t ended = -1;
    int64_t ended_as = -1;
  };
  Mark OnStepMark(int64_t next);
  int64_t OnCaptureBegin();
  int64_t OnCaptureEnd();
  int64_t OnProfilerStart();
  int64_t OnProfilerStop();
  int64_t OnRangePush(std::string_view name);
  int64_t OnRangePop();

  uint64_t launches() const { return launches_.load(std::memory_order_relaxed); }
  int64_t current_step() const { return step_.load(std::memory_order_relaxed); }
  // True once every selected step is over or the window is exhausted.
  bool finished() const;
  bool IsSelected(int64_t step) const { return config_.steps.Contains(step); }
  // True when the next launch cannot be selected: the current step is not
  // selected and the next launch cannot start a selected one (kernel mode:
  // the following step; launches:N: the step of the next launch). A racing
  // marker on another thread can still make a launch decided quiet fall in a
  // selected step; the engine notes such a launch instead of measuring it.
  bool Quiet() const;

 private:
  int64_t BeginRange();  // range modes: returns the ended step (if one was open) or -1
  int64_t EndRange();
  void SetStep(int64_t step);

  const settings::Config& config_;
  std::atomic<uint64_t> launches_{0};
  std::atomic<int64_t> step_{-1};
  std::atomic<bool> selected_{false};
  std::atomic<uint64_t> window_seen_{0};
  std::atomic<int64_t> kernel_steps_{0};  // kernel mode: matches seen so far

  std::mutex mu_;             // markers only
  std::atomic<int64_t> ranges_seen_{0};  // range modes: next step number
  bool in_range_ = false;
  int64_t nvtx_depth_ = 0;    // NVTX push depth (process-wide approximation)
  int64_t nvtx_open_depth_ = -1;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_STEP_TRACKER_H_
