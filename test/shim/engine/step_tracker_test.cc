#include "shim/engine/step_tracker.h"

#include <gtest/gtest.h>

#include "common/settings/config.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::ConfigFrom;

TEST(StepTrackerTest, MarkModeCountsStepsFromZero) {
  settings::Config c = ConfigFrom({{"NUMTRACE_STEPS", "1"}});
  StepTracker t(c);
  LaunchDecision d = t.OnLaunch(false);
  EXPECT_EQ(d.launch, 0u);
  EXPECT_EQ(d.step, 0);
  EXPECT_FALSE(d.selected);
  EXPECT_EQ(t.OnStepMark(), 0);
  d = t.OnLaunch(false);
  EXPECT_EQ(d.launch, 1u);
  EXPECT_EQ(d.step, 1);
  EXPECT_TRUE(d.selected);
  EXPECT_FALSE(t.finished());
  EXPECT_EQ(t.OnStepMark(), 1);
  EXPECT_FALSE(t.OnLaunch(false).selected);
  EXPECT_TRUE(t.finished());
  // Markers of other modes do nothing here.
  EXPECT_EQ(t.OnProfilerStart(), -1);
  EXPECT_EQ(t.current_step(), 2);
}

TEST(StepTrackerTest, NumberedMarkTakesTheJobsCountWhenAhead) {
  // A job resumed from a checkpoint at step 10 (numtrace_mark_step_to with
  // the optimizer's count): its first step ends as 10, the next is 11.
  settings::Config c = ConfigFrom({{"NUMTRACE_STEPS", "12"}});
  StepTracker t(c);
  EXPECT_EQ(t.OnLaunch(false).step, 0);
  StepTracker::Mark m = t.OnStepMark(11);
  EXPECT_EQ(m.ended, 0);
  EXPECT_EQ(m.ended_as, 10);
  EXPECT_EQ(t.OnLaunch(false).step, 11);
  m = t.OnStepMark(12);  // the count that follows: a plain step
  EXPECT_EQ(m.ended, 11);
  EXPECT_EQ(m.ended_as, 11);
  EXPECT_TRUE(t.OnLaunch(false).selected);  // step 12 as the job counts it
  // A count that is not ahead (a second optimizer, a reset) is a plain mark.
  m = t.OnStepMark(5);
  EXPECT_EQ(m.ended, 12);
  EXPECT_EQ(m.ended_as, 12);  // selected: never renumbered
  EXPECT_EQ(t.current_step(), 13);
  EXPECT_EQ(t.OnStepMark(-1).ended, 13);
  EXPECT_EQ(t.current_step(), 14);
}

TEST(StepTrackerTest, NumberedMarkKeepsTheNumberOfAStepCapturedInFull) {
  // Step 0 was captured in full under its number: its records keep it.
  settings::Config c = ConfigFrom({{"NUMTRACE_STEPS", "0"}});
  StepTracker t(c);
  EXPECT_TRUE(t.OnLaunch(false).selected);
  const StepTracker::Mark m = t.OnStepMark(11);
  EXPECT_EQ(m.ended_as, 0);
  EXPECT_EQ(t.current_step(), 11);
}

TEST(StepTrackerTest, ProfilerRangesAreSteps) {
  settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "profiler"}, {"NUMTRACE_STEPS", "1"}});
  StepTracker t(c);
  EXPECT_EQ(t.OnLaunch(false).step, -1);  // before any range
  t.OnProfilerStart();
  LaunchDecision d = t.OnLaunch(false);
  EXPECT_EQ(d.step, 0);
  EXPECT_FALSE(d.selected);
  EXPECT_EQ(t.OnProfilerStop(), 0);
  EXPECT_FALSE(t.OnLaunch(false).selected);
  t.OnProfilerStart();
  t.OnProfilerStart();  // nested start: same range
  d = t.OnLaunch(false);
  EXPECT_EQ(d.step, 1);
  EXPECT_TRUE(d.selected);
  EXPECT_EQ(t.OnProfilerStop(), 1);
  EXPECT_EQ(t.OnProfilerStop(), -1);  // unmatched stop is ignored
  EXPECT_EQ(t.OnCaptureBegin(), -1);  // api markers belong to another mode
}

TEST(StepTrackerTest, ApiRanges) {
  settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "api"}});
  StepTracker t(c);
  EXPECT_FALSE(t.OnLaunch(false).selected);
  t.OnCaptureBegin();
  EXPECT_TRUE(t.OnLaunch(false).selected);
  EXPECT_EQ(t.OnCaptureEnd(), 0);
  EXPECT_FALSE(t.OnLaunch(false).selected);
  EXPECT_EQ(t.OnStepMark(), -1);
}

TEST(StepTrackerTest, NvtxRangeByRegexClosesAtItsOwnDepth) {
  settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "nvtx:^train_step$"}});
  StepTracker t(c);
  t.OnRangePush("forward");  // not a step
  EXPECT_FALSE(t.OnLaunch(false).selected);
  t.OnRangePop();
  t.OnRangePush("train_step");
  t.OnRangePush("forward");
  EXPECT_TRUE(t.OnLaunch(false).selected);
  EXPECT_EQ(t.OnRangePop(), -1);  // inner pop: still inside the step
  EXPECT_TRUE(t.OnLaunch(false).selected);
  EXPECT_EQ(t.OnRangePop(), 0);
  EXPECT_FALSE(t.OnLaunch(false).selected);
  t.OnRangePush("train_step_extra");  // anchored regex: no match
  EXPECT_FALSE(t.OnLaunch(false).selected);
}

TEST(StepTrackerTest, KernelRegexStartsEachStep) {
  settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "kernel:embedding"}, {"NUMTRACE_STEPS", "1"}});
  StepTracker t(c);
  EXPECT_EQ(t.OnLaunch(false).step, -1);  // before the first match
  LaunchDecision d = t.OnLaunch(true);
  EXPECT_EQ(d.step, 0);
  EXPECT_FALSE(d.selected);
  EXPECT_EQ(t.OnLaunch(false).step, 0);
  d = t.OnLaunch(true);
  EXPECT_EQ(d.step, 1);
  EXPECT_TRUE(d.selected);
  EXPECT_TRUE(t.OnLaunch(false).selected);
  EXPECT_FALSE(t.OnLaunch(true).selected);
}

TEST(StepTrackerTest, EveryNLaunches) {
  settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "launches:3"}, {"NUMTRACE_STEPS", "1"}});
  StepTracker t(c);
  std::vector<bool> selected;
  for (int i = 0; i < 9; ++i) selected.push_back(t.OnLaunch(false).selected);
  EXPECT_EQ(selected, (std::vector<bool>{false, false, false, true, true, true, false, false, false}));
  EXPECT_TRUE(t.finished());
}

TEST(StepTrackerTest, QuietOutsideSelectedStepsInEveryMode) {
  {
    settings::Config c = ConfigFrom({{"NUMTRACE_STEPS", "1"}});  // mark mode
    StepTracker t(c);
    EXPECT_TRUE(t.Quiet());
    t.OnStepMark();
    EXPECT_FALSE(t.Quiet());
    t.OnStepMark();
    EXPECT_TRUE(t.Quiet());  // finished
  }
  {
    settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "kernel:embedding"}, {"NUMTRACE_STEPS", "1"}});
    StepTracker t(c);
    EXPECT_TRUE(t.Quiet()) << "the next match starts step 0, not selected";
    t.OnLaunch(true);  // step 0 begins
    EXPECT_FALSE(t.Quiet()) << "the next match starts step 1, selected";
    t.OnLaunch(true);  // step 1
    EXPECT_FALSE(t.Quiet());
    t.OnLaunch(true);  // step 2: past the last selected step
    EXPECT_TRUE(t.Quiet());
  }
  {
    settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "launches:3"}, {"NUMTRACE_STEPS", "1"}});
    StepTracker t(c);
    std::vector<bool> quiet;
    for (int i = 0; i < 7; ++i) {
      quiet.push_back(t.Quiet());
      t.OnLaunch(false);
    }
    // Launch 2 is the last of step 0, but the one after it opens step 1.
    EXPECT_EQ(quiet, (std::vector<bool>{true, true, false, false, false, false, true}));
  }
  {
    settings::Config c = ConfigFrom({{"NUMTRACE_STEP_MODE", "profiler"}});
    StepTracker t(c);
    EXPECT_TRUE(t.Quiet());
    t.OnProfilerStart();
    EXPECT_FALSE(t.Quiet());
    t.OnProfilerStop();
    EXPECT_TRUE(t.Quiet());
  }
}

TEST(StepTrackerTest, LaunchWindowSkipsThenCounts) {
  settings::Config c = ConfigFrom({{"NUMTRACE_LAUNCH_SKIP", "2"}, {"NUMTRACE_LAUNCH_COUNT", "3"},
                         {"NUMTRACE_STEPS", "all"}});
  StepTracker t(c);
  std::vector<bool> taken;
  for (int i = 0; i < 7; ++i) taken.push_back(t.TakeWindowSlot());
  EXPECT_EQ(taken, (std::vector<bool>{false, false, true, true, true, false, false}));
  EXPECT_TRUE(t.finished());
}

TEST(StepTrackerTest, NoWindowTakesEverything) {
  settings::Config c = ConfigFrom({});
  StepTracker t(c);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(t.TakeWindowSlot());
}

}  // namespace
}  // namespace numtrace::shim
