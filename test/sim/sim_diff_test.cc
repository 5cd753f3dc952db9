// Two simulated runs, one with a planted change, diffed by the analyzer:
// the planted kernel must be named as the first divergence, noise must not.
#include <gtest/gtest.h>

#include <string>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/terminal_summary.h"
#include "test/sim/sim_test_util.h"

namespace numtrace::sim {
namespace {

using analyzer::DiffResult;
using analyzer::Trace;
using ::numtrace::Verdict;

struct Diffed {
  Trace a, b;
  DiffResult result;
};

Diffed CaptureAndDiff(const MlpOptions& ref, const MlpOptions& changed) {
  Env env{{"NUMTRACE_STEPS", "1"}};
  Diffed d;
  d.a = ReadRun(RunWithEnv(ref, env, FreshDir("a")));
  d.b = ReadRun(RunWithEnv(changed, env, FreshDir("b")));
  d.result = analyzer::Judge(d.a, d.b, analyzer::Align(d.a, d.b));
  return d;
}

// seq of the n-th (0-based) kernel named `name` in `t`.
uint64_t NthKernel(const Trace& t, std::string_view name, int n) {
  for (const auto& k : t.kernels) {
    if (t.Name(k) == name && n-- == 0) return k.seq;
  }
  ADD_FAILURE() << name << " not found";
  return ~0ull;
}

// Two runs whose environments differ in NCCL_ALGO and CUBLAS_WORKSPACE_CONFIG
// (read by the shim at start-up) and whose numbers diverge: the summary names
// both differences with their effects, the terminal shows them before the
// first divergence and its verdict line names them.
TEST(SimDiffTest, DifferingEnvironmentIsNamedBeforeAnyKernel) {
  MlpOptions ref;
  ref.steps = 3;
  MlpOptions changed = ref;
  changed.perturb_layer = 1;
  changed.perturb_step = 1;
  Diffed d;
  d.a = ReadRun(RunWithEnv(ref, {{"NUMTRACE_STEPS", "1"}, {"NCCL_ALGO", "Ring"},
                                 {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}, {"OMP_NUM_THREADS", "4"}},
                           FreshDir("env_a")));
  d.b = ReadRun(RunWithEnv(changed, {{"NUMTRACE_STEPS", "1"}, {"NCCL_ALGO", "Tree"}, {"OMP_NUM_THREADS", "4"}},
                           FreshDir("env_b")));
  d.result = analyzer::Judge(d.a, d.b, analyzer::Align(d.a, d.b));
  ASSERT_EQ(d.result.verdict, Verdict::kDiverged);
  ASSERT_TRUE(d.result.environment.has_value());
  analyzer::DiffReport report{.path_a = d.a.path, .path_b = d.b.path};
  report.ranks.push_back({.rank = 0, .a = &d.a, .b = &d.b, .result = &d.result});

  const std::string json = analyzer::JsonSummary(report);
  EXPECT_NE(json.find(R"("differs":[{"key":"env.NCCL_ALGO","a":"Ring","b":"Tree","effect":")"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("only_a":["env.CUBLAS_WORKSPACE_CONFIG"])"), std::string::npos) << json;

  const std::string text = analyzer::TerminalSummary(report, {});
  const size_t nccl = text.find("env.NCCL_ALGO: A 'Ring', B 'Tree' - another collective algorithm");
  const size_t workspace = text.find("only in A: env.CUBLAS_WORKSPACE_CONFIG");
  const size_t first = text.find("first divergence");
  ASSERT_NE(nccl, std::string::npos) << text;
  ASSERT_NE(workspace, std::string::npos) << text;
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_LT(nccl, first);
  EXPECT_LT(workspace, first);
  const std::string verdict_line = text.substr(0, text.find('\n'));
  EXPECT_NE(verdict_line.find("settings differ: env.NCCL_ALGO, env.CUBLAS_WORKSPACE_CONFIG"), std::string::npos)
      << verdict_line;
}

TEST(SimDiffTest, IdenticalRunsAreIdentical) {
  MlpOptions o;
  o.steps = 3;
  Diffed d = CaptureAndDiff(o, o);
  EXPECT_EQ(d.result.verdict, Verdict::kIdentical);
  EXPECT_EQ(d.result.counts.pairs, d.a.kernels.size());
  EXPECT_EQ(d.result.counts.bitwise_equal, d.a.kernels.size());
  EXPECT_FALSE(d.result.first_divergence.has_value());
}

class PlantedLayerTest : public ::testing::TestWithParam<int> {};

TEST_P(PlantedLayerTest, FirstDivergenceIsThePerturbedGemm) {
  const int layer = GetParam();
  MlpOptions ref;
  ref.steps = 3;
  MlpOptions changed = ref;
  changed.perturb_layer = layer;
  changed.perturb_step = 1;  // the captured step
  Diffed d = CaptureAndDiff(ref, changed);
  ASSERT_EQ(d.result.verdict, Verdict::kDiverged);
  ASSERT_TRUE(d.result.first_divergence.has_value());
  const auto& pair = d.result.alignment.pairs[*d.result.first_divergence];
  const auto& ka = d.a.kernels[pair.a];
  EXPECT_EQ(d.a.Name(ka), kForwardGemmName);
  // Layer N's forward GEMM is the N-th "nn" GEMM of the step.
  EXPECT_EQ(ka.seq, NthKernel(d.a, kForwardGemmName, layer - 1));
  EXPECT_EQ(d.b.kernels[pair.b].seq, ka.seq);
  // Everything launched before it is bitwise equal.
  for (uint32_t i = 0; i < *d.result.first_divergence; ++i) {
    EXPECT_EQ(d.result.verdicts[i].status, PairStatus::kBitwiseEqual) << "pair " << i;
  }
  // Real captured traces: the perturbed GEMM is where the difference is
  // born, the one origin, and every later divergence descends from it.
  const auto& r = d.result;
  EXPECT_EQ(r.verdicts[*r.first_divergence].cause, Cause::kOrigin);
  EXPECT_EQ(r.origins.count, 1u);
  ASSERT_TRUE(r.origins.first.has_value());
  EXPECT_EQ(*r.origins.first, *r.first_divergence);
  EXPECT_EQ(r.origins.descendants[*r.origins.first], r.counts.diverged - 1);
}

INSTANTIATE_TEST_SUITE_P(Layers, PlantedLayerTest, ::testing::Values(1, 2));

TEST(SimDiffTest, ReductionOrderNoiseIsWithinTolerance) {
  MlpOptions ref;
  ref.steps = 3;
  MlpOptions reordered = ref;
  reordered.reorder_gemm = true;
  Diffed d = CaptureAndDiff(ref, reordered);
  EXPECT_EQ(d.result.verdict, Verdict::kWithinTolerance)
      << "first divergence at pair "
      << (d.result.first_divergence ? std::to_string(*d.result.first_divergence) : "none");
  EXPECT_GT(d.result.counts.within_tolerance, 0u);  // the noise was seen
  EXPECT_EQ(d.result.counts.diverged, 0u);
}

TEST(SimDiffTest, PlantedChangeAfterNoiseIsTheOnlyRoot) {
  // Every GEMM of B sums in reverse order (sub-tolerance noise from the first
  // kernel on) and layer 2's forward GEMM is scaled by 1.001: its inputs
  // differ in their bits, so origins name only noise; the root is the
  // planted GEMM, cause born, and every other divergence descends from it.
  MlpOptions ref;
  ref.steps = 3;
  MlpOptions changed = ref;
  changed.reorder_gemm = true;
  changed.perturb_layer = 2;
  changed.perturb_step = 1;
  Diffed d = CaptureAndDiff(ref, changed);
  const auto& r = d.result;
  ASSERT_EQ(r.verdict, Verdict::kDiverged);
  ASSERT_TRUE(r.first_divergence.has_value());
  const uint64_t planted = NthKernel(d.a, kForwardGemmName, 1);
  EXPECT_EQ(d.a.kernels[r.alignment.pairs[*r.first_divergence].a].seq, planted);
  EXPECT_EQ(r.verdicts[*r.first_divergence].cause, Cause::kBorn);
  EXPECT_EQ(r.roots.count, 1u);
  ASSERT_TRUE(r.roots.first.has_value());
  EXPECT_EQ(d.a.kernels[r.alignment.pairs[*r.roots.first].a].seq, planted);
  ASSERT_FALSE(r.roots.top.empty());
  EXPECT_EQ(r.roots.top[0], *r.roots.first);
  EXPECT_EQ(r.roots.descendants[*r.roots.first], r.counts.diverged - 1);
  EXPECT_EQ(r.origins.diverged, 0u);  // the origins are the noise
}

}  // namespace
}  // namespace numtrace::sim
