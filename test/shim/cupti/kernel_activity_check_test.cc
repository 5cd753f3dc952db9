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

}  // namespace
}  // namespace numtrace::shim
