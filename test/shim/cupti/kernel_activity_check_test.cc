// File: test/shim/cupti/kernel_activity_check_test.cc
//
// Matching kernel activity records against the launches the switchboard
// saw: matched records vanish, unmatched ones are counted by name, graph
// kernels go to their graph launch, numtrace's own kernel never counts,
// and a record that arrives before its launch is noted still matches.
#include "shim/cupti/kernel_activity_check.h"

#include <gtest/gtest.h>

namespace numtrace::shim {
namespace {

TEST(KernelActivityCheck, MatchedRecordsAreNotReported) {
  KernelActivityCheck check("numtrace_reduce_batch");
  check.NoteLaunch(1);
  check.NoteLaunch(2);
  check.OnKernel(1, "gemm", false);
  check.OnKernel(2, "softmax", false);
  EXPECT_TRUE(check.Settle().empty());
}

TEST(KernelActivityCheck, UnmatchedRecordsAreCountedByName) {
  KernelActivityCheck check("numtrace_reduce_batch");
  check.NoteLaunch(1);
  check.OnKernel(1, "gemm", false);
  check.OnKernel(7, "ncclKernel_AllReduce", false);
  check.OnKernel(8, "ncclKernel_AllReduce", false);
  check.OnKernel(9, "", false);
  auto u = check.Settle();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].name, "(unnamed kernel)");
  EXPECT_EQ(u[0].count, 1u);
  EXPECT_EQ(u[1].name, "ncclKernel_AllReduce");
  EXPECT_EQ(u[1].count, 2u);
  EXPECT_FALSE(u[1].in_graph);
  EXPECT_TRUE(check.Settle().empty()) << "records are reported once";
}

TEST(KernelActivityCheck, OwnKernelsAreExcluded) {
  KernelActivityCheck check("numtrace_reduce_batch");
  check.OnKernel(3, "numtrace_reduce_batch", false);
  EXPECT_TRUE(check.Settle().empty());
}

TEST(KernelActivityCheck, GraphKernelsAreAttributedToTheGraphLaunch) {
  KernelActivityCheck check("numtrace_reduce_batch");
  check.NoteLaunch(5);  // even a noted id: graph nodes are never measured one by one
  check.OnKernel(5, "fused_add", true);
  check.OnKernel(5, "fused_add", true);
  auto u = check.Settle();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_TRUE(u[0].in_graph);
  EXPECT_EQ(u[0].count, 2u);
}

TEST(KernelActivityCheck, ARecordBeforeItsLaunchIsNotedStillMatches) {
  KernelActivityCheck check("numtrace_reduce_batch");
  check.OnKernel(11, "short_kernel", false);  // delivered before the EXIT returned
  check.NoteLaunch(11);
  EXPECT_TRUE(check.Settle().empty());
  EXPECT_EQ(check.launches_noted(), 1u);
}

// NUMTRACE_STEPS=all: the set of noted launches was never cleared (about
// 4 GB per 100 M launches). Now it holds kKeptGenerations steps' worth, and
// a record that comes one step late still matches.
TEST(KernelActivityCheck, NotedLaunchesAreKeptForSomeStepsNotTheWholeJob) {
  KernelActivityCheck check("numtrace_reduce_batch");
  constexpr uint64_t kKept = KernelActivityCheck::kKeptGenerations;
  uint32_t corr = 1;
  for (int step = 0; step < 50; ++step) {
    for (int i = 0; i < 1000; ++i) check.NoteLaunch(corr++);
    const uint32_t late = step == 0 ? corr - 1 : corr - 1500;  // step 0: its own; later: the last step's
    check.OnKernel(late, "late_from_last_step", false);
    EXPECT_TRUE(check.Settle().empty()) << "step " << step;
    EXPECT_LE(check.launches_noted(), 1000u * kKept) << "step " << step;
  }
  EXPECT_EQ(check.launches_noted(), 1000u * (kKept - 1)) << "the last steps', kept for their late records";
  EXPECT_EQ(check.TakeLate(), 0u);
}

// The host runs ahead of the GPU without a per-step synchronisation: a
// step's records come several step ends later. Fails before the fix (ids
// kept for two settles): step 0's records, arriving after three more
// steps, were counted as unmeasured (a false kernels_unmeasured).
TEST(KernelActivityCheck, RecordsStepsLateStillMatch) {
  KernelActivityCheck check("numtrace_reduce_batch");
  for (uint32_t step = 0; step < 4; ++step) {
    for (uint32_t i = 0; i < 10; ++i) check.NoteLaunch(100 * step + i);
    if (step == 3) {
      for (uint32_t i = 0; i < 10; ++i) check.OnKernel(i, "step0_kernel", false);
    }
    EXPECT_TRUE(check.Settle().empty()) << "step " << step;
  }
  EXPECT_EQ(check.TakeLate(), 0u);
}

// Later than the ids are kept: counted apart (late), never as unmeasured;
// a kernel no launch of the kept steps explains, newer than every dropped
// id, is still unmeasured.
TEST(KernelActivityCheck, RecordsLaterThanTheKeptStepsAreLateNotUnmeasured) {
  KernelActivityCheck check("numtrace_reduce_batch");
  const uint32_t steps = KernelActivityCheck::kKeptGenerations + 3;
  for (uint32_t step = 0; step < steps; ++step) {
    for (uint32_t i = 0; i < 10; ++i) check.NoteLaunch(100 * step + i);
    EXPECT_TRUE(check.Settle().empty()) << "step " << step;
  }
  check.OnKernel(3, "step0_kernel", false);            // aged out
  check.OnKernel(100 * (steps - 1) + 5, "kept", false);  // still held
  check.OnKernel(100 * (steps - 1) + 50, "internal_launch", false);
  auto u = check.Settle();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].name, "internal_launch");
  EXPECT_EQ(check.TakeLate(), 1u);
  EXPECT_EQ(check.TakeLate(), 0u) << "taken once";
}

// Activity stays enabled for the whole job: kernels of quiet steps must not
// count as unmeasured, nor pile up in memory.
TEST(KernelActivityCheck, RecordsOutsideCapturedWindowsAreIgnored) {
  KernelActivityCheck check("numtrace_reduce_batch");
  check.Window(false, 10);  // the first launch was quiet
  check.OnKernel(12, "quiet_step_kernel", false);
  check.Window(true, 20);   // captured window [20, 30)
  check.NoteLaunch(20);
  check.OnKernel(15, "between_windows", false);  // late record of the quiet step
  check.OnKernel(20, "gemm", false);
  check.OnKernel(21, "internal_launch", false);
  check.NoteLaunch(22);
  check.Window(false, 30);
  check.OnKernel(22, "late_but_inside", false);
  check.OnKernel(35, "after_the_window", false);
  auto u = check.Settle();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].name, "internal_launch");
  EXPECT_EQ(check.records_outside(), 3u) << "12 and 35 dropped on arrival, 15 at settle";
}

}  // namespace
}  // namespace numtrace::shim
