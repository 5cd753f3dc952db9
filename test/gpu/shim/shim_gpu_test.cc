// File: test/gpu/shim/shim_gpu_test.cc
//
// End-to-end checks of libnumtrace.so on a real GPU (ctest label `gpu`),
// driving the built sample programs: the shim must not change a job's
// results, and numtrace-diff must point at the kernel that made two runs
// part. Every test skips, with the reason, where there is no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "test/gpu/shim/gpu_env.h"

namespace numtrace::gpu_test {
namespace {

class ShimGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!GpuAvailable(&why)) GTEST_SKIP() << why;
    for (const std::string& p : {Sample("mlp_train"), ShimLibrary(), DiffTool()}) {
      ASSERT_EQ(access(p.c_str(), R_OK), 0) << "missing " << p << " (build it or set NUMTRACE_GPU_BUNDLE)";
    }
  }

  // Runs mlp_train under the shim, capturing every step; returns the trace path.
  std::string TracedRun(const std::string& args, const std::string& tag, RunResult* result) {
    std::string dir = MakeTempDir(tag);
    *result = RunCommand(Sample("mlp_train") + " " + args,
                  {{"LD_PRELOAD", ShimLibrary()}, {"NUMTRACE_OUTPUT_DIR", dir},
                   {"NUMTRACE_STEPS", "all"}, {"NUMTRACE_LABEL", tag}});
    return FindTrace(dir);
  }
};

TEST_F(ShimGpuTest, PreloadKeepsOutputAndWeightsBitwise) {
  std::string dir = MakeTempDir("bitwise");
  RunResult plain = RunCommand(Sample("mlp_train") + " --steps 4 --out " + dir + "/plain.bin");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  RunResult traced = RunCommand(Sample("mlp_train") + " --steps 4 --out " + dir + "/traced.bin",
                         {{"LD_PRELOAD", ShimLibrary()}, {"NUMTRACE_OUTPUT_DIR", dir + "/trace"},
                          {"NUMTRACE_STEPS", "all"}});
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(plain.out, traced.out) << "losses changed under the shim";
  std::string a = ReadFile(dir + "/plain.bin"), b = ReadFile(dir + "/traced.bin");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "final weights differ under the shim";

  std::string trace = FindTrace(dir + "/trace");
  ASSERT_FALSE(trace.empty()) << "no trace written; stderr: " << traced.err;
  std::string text = ReadFile(trace);
  EXPECT_NE(text.find("\"type\":\"header\""), std::string::npos);
  EXPECT_NE(text.find("linear_forward"), std::string::npos) << "kernels missing from the trace";
  EXPECT_NE(text.find("\"type\":\"footer\""), std::string::npos) << "trace not completed at exit";
  EXPECT_NE(text.find("\"dtype\":"), std::string::npos) << "no buffer measured";
}

TEST_F(ShimGpuTest, PerturbedLayerIsFirstDivergence) {
  RunResult ra, rb;
  std::string a = TracedRun("--steps 2", "A", &ra);
  std::string b = TracedRun("--steps 2 --perturb 1", "B", &rb);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  std::string json = MakeTempDir("perturb") + "/summary.json";
  RunResult d = RunCommand(DiffTool() + " " + a + " " + b + " --json " + json);
  EXPECT_EQ(d.exit_code, 1) << d.out << d.err;
  std::string summary = ReadFile(json);
  std::string name = JsonString(summary, "a_name", "\"first_divergence\"");
  EXPECT_NE(name.find("linear_forward"), std::string::npos) << summary;
  EXPECT_NE(name.find("ILi1E"), std::string::npos) << "expected layer 1's forward: " << name;
}

TEST_F(ShimGpuTest, AtomicsAreFirstDivergenceOfNondeterministicRuns) {
  RunResult ra, rb;
  std::string a = TracedRun("--steps 2 --nondeterministic", "N1", &ra);
  std::string b = TracedRun("--steps 2 --nondeterministic", "N2", &rb);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  std::string json = MakeTempDir("atomics") + "/summary.json";
  RunResult d = RunCommand(DiffTool() + " " + a + " " + b + " --json " + json);
  std::string summary = ReadFile(json);
  std::string verdict = JsonString(summary, "verdict");
  ASSERT_FALSE(verdict.empty()) << d.err;
  if (verdict == "identical") GTEST_SKIP() << "atomics happened to sum in the same order twice";
  std::string name = JsonString(summary, "a_name", "\"first_divergence\"");
  if (verdict == "diverged") {
    EXPECT_NE(name.find("weight_grad_atomic"), std::string::npos) << summary;
  }
}

TEST_F(ShimGpuTest, DeterministicRunsAreIdentical) {
  RunResult ra, rb;
  std::string a = TracedRun("--steps 2", "D1", &ra);
  std::string b = TracedRun("--steps 2", "D2", &rb);
  std::string json = MakeTempDir("det") + "/summary.json";
  RunResult d = RunCommand(DiffTool() + " " + a + " " + b + " --json " + json);
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_EQ(JsonString(ReadFile(json), "verdict"), "identical");
}

}  // namespace
}  // namespace numtrace::gpu_test
