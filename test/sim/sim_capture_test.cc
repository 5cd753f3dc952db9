// What the capture engine records from the simulated training loop under
// each setting: which launches, which roles, and that capturing never
// changes the program's results. 15 kernels per training step; launches are
// numbered from 0, so step s is launches 15*s .. 15*s+14.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>

#include "test/sim/sim_test_util.h"

namespace numtrace::sim {
namespace {

constexpr uint64_t kKernelsPerStep = 15;

std::vector<uint64_t> Launches(const analyzer::Trace& t) {
  std::vector<uint64_t> out;
  for (const auto& k : t.kernels) out.push_back(k.launch);
  return out;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t count) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

analyzer::Trace Capture(Env env, int steps = 3, int profile_step = -1) {
  MlpOptions o;
  o.steps = steps;
  o.profile_step = profile_step;
  return ReadRun(RunWithEnv(o, std::move(env), FreshDir("out")));
}

TEST(SimCaptureTest, CapturingDoesNotChangeResults) {
  MlpOptions o;
  o.steps = 3;
  SimRun off = RunWithEnv(o, {{"NUMTRACE_ENABLE", "0"}}, FreshDir("off"));
  SimRun on = RunWithEnv(o, {{"NUMTRACE_STEPS", "0-2"}}, FreshDir("on"));
  EXPECT_TRUE(off.trace_path.empty());
  ASSERT_FALSE(on.trace_path.empty());
  ASSERT_EQ(off.result.losses.size(), on.result.losses.size());
  EXPECT_EQ(0, std::memcmp(off.result.losses.data(), on.result.losses.data(),
                           off.result.losses.size() * sizeof(float)));
  ASSERT_EQ(off.result.weights.size(), on.result.weights.size());
  EXPECT_EQ(0, std::memcmp(off.result.weights.data(), on.result.weights.data(),
                           off.result.weights.size() * sizeof(float)));
}

TEST(SimCaptureTest, MarkModeCapturesExactlyTheChosenStep) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEPS", "1"}});
  EXPECT_EQ(Launches(t), Range(15, kKernelsPerStep));
  for (const auto& k : t.kernels) EXPECT_EQ(k.step, 1);
  EXPECT_FALSE(t.truncated);
  ASSERT_TRUE(t.footer.has_value());
  EXPECT_EQ(t.footer->kernels, kKernelsPerStep);
  EXPECT_EQ(t.footer->launches, 3 * kKernelsPerStep);
}

TEST(SimCaptureTest, SeveralSteps) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEPS", "0,2"}});
  std::vector<uint64_t> want = Range(0, kKernelsPerStep);
  for (uint64_t l : Range(30, kKernelsPerStep)) want.push_back(l);
  EXPECT_EQ(Launches(t), want);
}

TEST(SimCaptureTest, ProfilerRangeMode) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEP_MODE", "profiler"}}, 3, /*profile_step=*/2);
  EXPECT_EQ(Launches(t), Range(30, kKernelsPerStep));
}

TEST(SimCaptureTest, NvtxRangeMode) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEP_MODE", "nvtx:^train_step$"}, {"NUMTRACE_STEPS", "1"}});
  EXPECT_EQ(Launches(t), Range(15, kKernelsPerStep));
  // No matching range: nothing captured, so no file at all.
  MlpOptions o;
  o.steps = 2;
  SimRun none = RunWithEnv(o, {{"NUMTRACE_STEP_MODE", "nvtx:^no_such_range$"}}, FreshDir("none"));
  EXPECT_TRUE(none.configured);
  EXPECT_TRUE(none.trace_path.empty());
}

TEST(SimCaptureTest, KernelRegexStartsSteps) {
  // The loss-zeroing fill kernel opens every step.
  analyzer::Trace t = Capture({{"NUMTRACE_STEP_MODE", "kernel:FillFunctor"}, {"NUMTRACE_STEPS", "1"}});
  EXPECT_EQ(Launches(t), Range(15, kKernelsPerStep));
}

TEST(SimCaptureTest, EveryNLaunchesMode) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEP_MODE", "launches:15"}, {"NUMTRACE_STEPS", "2"}});
  EXPECT_EQ(Launches(t), Range(30, kKernelsPerStep));
}

TEST(SimCaptureTest, KernelFilters) {
  analyzer::Trace gemms = Capture({{"NUMTRACE_STEPS", "1"}, {"NUMTRACE_KERNEL", "regex:sgemm_.*_(nn|tn)$"}});
  ASSERT_EQ(gemms.kernels.size(), 4u);  // two forward, two weight-gradient GEMMs
  for (const auto& k : gemms.kernels) EXPECT_NE(gemms.Name(k).find("sgemm"), std::string_view::npos);
  analyzer::Trace no_triton = Capture({{"NUMTRACE_STEPS", "1"}, {"NUMTRACE_KERNEL_EXCLUDE", "triton_"}});
  EXPECT_EQ(no_triton.kernels.size(), kKernelsPerStep - 1);
  for (const auto& k : no_triton.kernels) EXPECT_EQ(no_triton.Name(k).find("triton"), std::string_view::npos);
}

TEST(SimCaptureTest, LaunchWindowWithinTheStep) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEPS", "1"}, {"NUMTRACE_LAUNCH_SKIP", "2"},
                               {"NUMTRACE_LAUNCH_COUNT", "5"}});
  EXPECT_EQ(Launches(t), Range(17, 5));
}

TEST(SimCaptureTest, RolesFromBeforeAndAfterHashes) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEPS", "1"}});
  const analyzer::Kernel* gemm = nullptr;
  for (const auto& k : t.kernels) {
    if (t.Name(k) == kForwardGemmName) { gemm = &k; break; }
  }
  ASSERT_NE(gemm, nullptr);
  auto buffers = t.BuffersOf(*gemm);
  ASSERT_EQ(buffers.size(), 3u);  // x, w1, h: all found inside one struct parameter
  std::multiset<Role> roles;
  for (const auto& b : buffers) {
    roles.insert(b.role);
    EXPECT_EQ(b.dtype, DType::kF32);
  }
  EXPECT_EQ(roles, (std::multiset<Role>{Role::kIn, Role::kIn, Role::kOut}));
  // The SGD launch finds all eight parameter and gradient buffers inside
  // TensorListMetadata; the four parameters change, the gradients do not.
  const auto& sgd = t.kernels.back();
  std::multiset<Role> sgd_roles;
  for (const auto& b : t.BuffersOf(sgd)) sgd_roles.insert(b.role);
  EXPECT_EQ(sgd_roles.count(Role::kOut), 4u);
  EXPECT_EQ(sgd_roles.count(Role::kIn), 4u);
}

TEST(SimCaptureTest, TritonKernelTakesAnnotatedDTypes) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEPS", "1"}});
  int seen = 0;
  for (const auto& k : t.kernels) {
    if (t.Name(k) != kTritonBiasReluName) continue;
    ++seen;
    for (const auto& b : t.BuffersOf(k)) {
      EXPECT_EQ(b.dtype, DType::kF32);
      EXPECT_EQ(b.dtype_from, DTypeSource::kSignature);
    }
  }
  EXPECT_EQ(seen, 1);
}

TEST(SimCaptureTest, OutputsAllMeasuresAfterOnly) {
  analyzer::Trace t = Capture({{"NUMTRACE_STEPS", "1"}, {"NUMTRACE_OUTPUTS", "all"}});
  ASSERT_EQ(t.kernels.size(), kKernelsPerStep);
  for (const auto& b : t.buffers) EXPECT_EQ(b.role, Role::kUnknown);
}

TEST(SimCaptureTest, KilledProcessLeavesReadableTruncatedTrace) {
  const std::string dir = FreshDir("killed");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    MlpOptions o;
    o.steps = 4;
    o.kill_after_launches = 2 * kKernelsPerStep + 5;  // in step 2, after step 1 was captured
    RunWithEnv(o, {{"NUMTRACE_STEPS", "1-3"}}, dir);
    _exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  SimRun run;
  run.trace_path = dir + "/rank_0.ntrace.jsonl";
  analyzer::Trace t = ReadRun(run);
  EXPECT_TRUE(t.truncated);
  EXPECT_FALSE(t.footer.has_value());
  // Step 1 was flushed at its end; step 2's first launches may or may not
  // have reached the file; the reader dropped a line cut by the kill, if any.
  ASSERT_GE(t.kernels.size(), kKernelsPerStep);
  EXPECT_LE(t.kernels.size(), kKernelsPerStep + 5);
  EXPECT_EQ(Launches(t)[0], 15u);
}

TEST(SimCaptureTest, BadSettingLeavesTheRunUntouched) {
  MlpOptions o;
  o.steps = 2;
  SimRun bad = RunWithEnv(o, {{"NUMTRACE_STEPS", "two"}}, FreshDir("bad"));
  EXPECT_FALSE(bad.configured);
  EXPECT_TRUE(bad.trace_path.empty());
  EXPECT_EQ(bad.result.losses.size(), 2u);
}

}  // namespace
}  // namespace numtrace::sim
