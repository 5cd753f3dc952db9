#include "launcher/twice_command.h"

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/format/diff_summary.h"
#include "analyzer/judge/origin_hints.h"
#include "test/launcher/launcher_test_util.h"

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using analyzer::HintForKernel;
using analyzer::OriginHint;
using testing::TempDir;
using testing::TestContext;

constexpr const char kIndexAdd[] =
    "void at::native::indexFuncSmallIndex<float, long, unsigned int, 1, 1, -2, true>(at::cuda::detail::"
    "TensorInfo<float, unsigned int>)";

TEST(OriginHints, KnownFamiliesGetTheirHint) {
  const OriginHint* h = HintForKernel(kIndexAdd);
  ASSERT_NE(h, nullptr);
  EXPECT_THAT(std::string(h->hint), HasSubstr("torch.use_deterministic_algorithms(True)"));
  EXPECT_EQ(std::string(HintForKernel("void at::native::embedding_backward_feature_kernel<float>")->family),
            "embedding backward with atomics");
  EXPECT_EQ(std::string(HintForKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)")->family),
            "NCCL collective");
  // A reduce-scatter's name holds "scatter": still NCCL's hint, never index_add's.
  const OriginHint* rs = HintForKernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(std::string(rs->family), "NCCL collective");
  EXPECT_THAT(std::string(rs->hint), HasSubstr("NCCL_ALGO"));
  EXPECT_EQ(std::string(HintForKernel("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_splitK_64x64>")->family),
            "split-K GEMM");
  EXPECT_EQ(std::string(HintForKernel("weight_grad_atomic")->family), "atomics");
  EXPECT_EQ(HintForKernel("void at::native::softmax_warp_forward<float>"), nullptr);
}

constexpr const char kSummaryWithOrigins[] = R"({"format":"numtrace-diff-summary","version":1,
 "verdict":"within_tolerance",
 "first_divergence":null,
 "origins":{"count":1,"diverged":0,
   "first":{"a_seq":12,"b_seq":12,"a_name":"IDX","b_name":"IDX","score":0.02,"status":"within_tolerance","descendants":0},
   "top":[{"a_seq":12,"b_seq":12,"a_name":"IDX","b_name":"IDX","score":0.02,"status":"within_tolerance","descendants":5}]}})";

TEST(DiffSummary, ReadsOriginsPerTheContractAndPrintsAHintPerOrigin) {
  std::string json = kSummaryWithOrigins;
  json.replace(json.find("IDX"), 3, kIndexAdd);
  json.replace(json.find("IDX"), 3, kIndexAdd);
  json.replace(json.find("IDX"), 3, kIndexAdd);
  json.replace(json.find("IDX"), 3, kIndexAdd);
  absl::StatusOr<DiffSummaryView> s = ParseDiffSummary(json, "s.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->has_origins);
  ASSERT_EQ(s->origins.size(), 1u);
  EXPECT_EQ(s->origins[0].a_seq, 12u);
  EXPECT_EQ(s->origins[0].descendants, 5u);
  std::ostringstream out;
  PrintOrigins(*s, out);
  EXPECT_THAT(out.str(), HasSubstr("1 origin: kernels whose inputs were bitwise equal"));
  EXPECT_THAT(out.str(), HasSubstr("seq 12  void at::native::indexFuncSmallIndex"));
  EXPECT_THAT(out.str(), HasSubstr("index_add/scatter with atomics: "));
}

TEST(DiffSummary, PerRankOriginsKeepTheirRank) {
  std::string json = R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
    "first_divergence":{"rank":1,"a_seq":4,"a_name":"k","kind":"values","cause":"origin"},
    "ranks":[{"rank":0,"origins":{"count":0,"diverged":0,"first":null,"top":[]}},
             {"rank":1,"origins":{"count":1,"diverged":1,"first":null,
               "top":[{"a_seq":4,"a_name":"k","score":3,"status":"diverged","descendants":1}]}}]})";
  absl::StatusOr<DiffSummaryView> s = ParseDiffSummary(json, "s.json");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->origins.size(), 1u);
  EXPECT_EQ(s->origins[0].rank, 1);
  EXPECT_EQ(s->first_divergence->cause, Cause::kOrigin);
  std::ostringstream out;
  PrintOrigins(*s, out);
  EXPECT_THAT(out.str(), HasSubstr("rank 1 seq 4  k"));
  EXPECT_THAT(out.str(), HasSubstr("no known family"));
}

TEST(DiffSummary, OriginsRolledUpOnlyAtTheTopOfADirectorySummaryAreRead) {
  absl::StatusOr<DiffSummaryView> s = ParseDiffSummary(
      R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged","ranks":[{"rank":0}],
          "origins":{"count":1,"diverged":1,"top":[{"a_seq":2,"a_name":"k","score":2,"status":"diverged"}]}})",
      "s.json");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->has_origins);
  ASSERT_EQ(s->origins.size(), 1u);
  EXPECT_EQ(s->origins[0].a_seq, 2u);
}

TEST(DiffSummary, ASummaryWithoutOriginsSaysSo) {
  absl::StatusOr<DiffSummaryView> s = ParseDiffSummary(
      R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
          "first_divergence":{"a_seq":3,"a_name":"weight_grad_atomic","kind":"values"}})", "s.json");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_origins);
  std::ostringstream out;
  PrintOrigins(*s, out);
  EXPECT_THAT(out.str(), HasSubstr("names no origins"));
  EXPECT_THAT(out.str(), HasSubstr("atomics: "));
  EXPECT_FALSE(ParseDiffSummary("{\"format\":\"other\"}", "x.json").ok());
  EXPECT_FALSE(ParseDiffSummary("not json", "x.json").ok());
}

// The words `twice` acts on are read typed, from their one list
// (common/format/summary_words.h): a verdict, step kind, or first
// divergence's kind or cause outside its list
// is an error naming it, never a quiet "not identical".
TEST(TwiceSummary, VerdictStepKindAndDivergenceWordsAreReadFromTheirLists) {
  absl::StatusOr<DiffSummaryView> s = ParseDiffSummary(
      R"({"format":"numtrace-diff-summary","version":1,"verdict":"within_tolerance",
          "steps":{"compared":3,"first_differing":1,"first_kind":"kernels","first_kernel":{"index":2}}})", "s.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->verdict, Verdict::kWithinTolerance);
  ASSERT_TRUE(s->steps);
  EXPECT_EQ(s->steps->first_kind, StepDifference::kKernels);
  absl::StatusOr<DiffSummaryView> odd =
      ParseDiffSummary(R"({"format":"numtrace-diff-summary","version":1,"verdict":"identicalish"})", "x.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "x.json: verdict \"identicalish\" is not one of identical, within_tolerance, diverged");
  odd = ParseDiffSummary(R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
                            "steps":{"compared":3,"first_differing":1,"first_kind":"digests"}})", "x.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(std::string(odd.status().message()), HasSubstr("first_kind \"digests\" is not one of digest, kernels"));
  odd = ParseDiffSummary(R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
                            "origins":{"count":1,"top":[{"a_seq":3,"a_name":"k","status":"values"}]}})", "x.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(std::string(odd.status().message()), HasSubstr("status \"values\" is not one of identical"));
  // The first divergence's kind and cause, from the judge's lists.
  s = ParseDiffSummary(R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
      "first_divergence":{"a_seq":3,"a_name":"k","kind":"nonfinite","cause":"born"}})", "s.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->first_divergence->kind, PairStatus::kNonfiniteMismatch);
  EXPECT_EQ(s->first_divergence->cause, Cause::kBorn);
  odd = ParseDiffSummary(R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
                            "first_divergence":{"a_seq":3,"a_name":"k","kind":"value"}})", "x.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(std::string(odd.status().message()), HasSubstr("kind \"value\" is not one of bitwise_equal"));
  odd = ParseDiffSummary(R"({"format":"numtrace-diff-summary","version":1,"verdict":"diverged",
                            "first_divergence":{"a_seq":3,"a_name":"k","kind":"values","cause":"birth"}})", "x.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(std::string(odd.status().message()), HasSubstr("cause \"birth\" is not one of none, origin"));
}

std::vector<std::string> SimCommand(bool nondeterministic) {
  std::vector<std::string> c = {"--", testing::BuildBin() + "/numtrace-sim", "--steps", "2"};
  if (nondeterministic) c.push_back("--nondeterministic");
  return c;
}

TEST(TwiceCommand, IdenticalRunsExitZero) {
  TempDir tmp;
  TestContext t;
  std::vector<std::string> args = {"twice", "-o", tmp / "hunt", "--steps", "all"};
  for (const std::string& a : SimCommand(false)) args.push_back(a);
  EXPECT_EQ(TwiceCommandMain(args, t.ctx), 0) << t.err.str();
  EXPECT_THAT(t.out.str(), HasSubstr("the two runs are bitwise identical"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "hunt/summary.json"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "hunt/report.html"));
}

TEST(TwiceCommand, NondeterministicRunsDifferAndTheOriginIsTheAtomicsKernel) {
  TempDir tmp;
  TestContext t;
  std::vector<std::string> args = {"twice", "-o", tmp / "hunt", "--steps", "all"};
  for (const std::string& a : SimCommand(true)) args.push_back(a);
  EXPECT_EQ(TwiceCommandMain(args, t.ctx), 1) << t.err.str();
  EXPECT_THAT(t.out.str(), HasSubstr("the two runs differ"));
  absl::StatusOr<DiffSummaryView> s = ReadDiffSummary(tmp / "hunt/summary.json");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->has_origins);
  ASSERT_EQ(s->origins.size(), 2u);  // the two atomics launches of the captured step
  EXPECT_THAT(s->origins[0].a_name, HasSubstr("indexFuncSmallIndex"));
  for (const OriginView& o : s->origins) EXPECT_THAT(o.a_name, HasSubstr("indexFuncSmallIndex"));
  EXPECT_THAT(t.out.str(), HasSubstr("index_add/scatter with atomics: its sums land in thread-scheduling "
                                     "order: torch.use_deterministic_algorithms(True)"));
}

// Settings that allow run-to-run differences: warned before the job runs
// (the environment's variables) and after run 1 (what its trace recorded),
// and after the divergence the one that can change the origin's kernel is
// named: non-deterministic algorithms for the atomics kernel.
TEST(TwiceCommand, WarnsOnANonDeterministicConfigurationAndNamesTheLikelyCause) {
  TempDir tmp;
  TestContext t;
  t.ctx.env.Unset("CUBLAS_WORKSPACE_CONFIG");
  std::vector<std::string> args = {"twice", "-o", tmp / "hunt", "--steps", "all"};
  for (const std::string& a : SimCommand(true)) args.push_back(a);
  EXPECT_EQ(TwiceCommandMain(args, t.ctx), 1) << t.err.str();
  const std::string err = t.err.str();
  const size_t workspace = err.find("numtrace twice: CUBLAS_WORKSPACE_CONFIG is unset");
  const size_t run1 = err.find("== run 1 of 2");
  const size_t det = err.find("run 1 recorded: deterministic algorithms are off");
  const size_t run2 = err.find("== run 2 of 2");
  ASSERT_NE(workspace, std::string::npos) << err;
  ASSERT_NE(det, std::string::npos) << err;
  EXPECT_LT(workspace, run1) << "before any job ran";
  EXPECT_LT(det, run2) << "before run 2";
  EXPECT_THAT(t.out.str(), HasSubstr("likely cause: torch.deterministic_algorithms: deterministic algorithms are off"));

  // Pinned: no warning at all.
  TempDir tmp2;
  TestContext quiet;
  quiet.ctx.env.Set("CUBLAS_WORKSPACE_CONFIG", ":4096:8");
  std::vector<std::string> same = {"twice", "-o", tmp2 / "hunt", "--steps", "all"};
  for (const std::string& a : SimCommand(false)) same.push_back(a);
  EXPECT_EQ(TwiceCommandMain(same, quiet.ctx), 0) << quiet.err.str();
  EXPECT_THAT(quiet.err.str(), ::testing::Not(HasSubstr("CUBLAS_WORKSPACE_CONFIG")));
  EXPECT_THAT(quiet.err.str(), ::testing::Not(HasSubstr("deterministic")));
}

// The whole hunt in one command: digests of every step, the first differing
// step, both runs again with that step in full, its origins with hints.
TEST(TwiceCommand, WatchHuntNamesTheStepAndTheAtomicsKernel) {
  TempDir tmp;
  TestContext t;
  std::vector<std::string> args = {"twice", "-o", tmp / "hunt", "--watch", "--", testing::BuildBin() + "/numtrace-sim",
                                   "--steps", "6", "--nondeterministic"};
  EXPECT_EQ(TwiceCommandMain(args, t.ctx), 1) << t.err.str();
  EXPECT_THAT(t.err.str(), HasSubstr("rank 0: 0 kernels captured, 6 steps digested, complete: "));
  EXPECT_THAT(t.out.str(), HasSubstr("== first differing step: 0 (of 6 compared), launch 9 of the step"));
  EXPECT_THAT(t.out.str(), HasSubstr("   run1: void at::native::indexFuncSmallIndex"));
  EXPECT_THAT(t.out.str(), HasSubstr("== capture step 0 in full, run 2 of 2"));
  EXPECT_THAT(t.out.str(), HasSubstr("index_add/scatter with atomics: "));
  absl::StatusOr<DiffSummaryView> watch = ReadDiffSummary(tmp / "hunt/summary.json");
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(watch->steps.has_value());
  EXPECT_EQ(watch->steps->first_differing, 0);
  EXPECT_EQ(watch->steps->compared, 6u);
  absl::StatusOr<DiffSummaryView> full = ReadDiffSummary(tmp / "hunt/step0-summary.json");
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_FALSE(full->origins.empty());
  for (const OriginView& o : full->origins) EXPECT_THAT(o.a_name, HasSubstr("indexFuncSmallIndex"));
}

TEST(TwiceCommand, WatchHuntOfIdenticalRunsExitsZeroWithoutCapturingAgain) {
  TempDir tmp;
  TestContext t;
  std::vector<std::string> args = {"twice", "-o", tmp / "hunt", "--watch=sampled", "--",
                                   testing::BuildBin() + "/numtrace-sim", "--steps", "5"};
  EXPECT_EQ(TwiceCommandMain(args, t.ctx), 0) << t.err.str();
  EXPECT_THAT(t.out.str(), HasSubstr("== verdict: every step is identical (5 steps compared by digest)"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "hunt/step0-run1"));
}

TEST(TwiceCommand, ABadWatchModeIsRefusedBeforeAnythingRuns) {
  TempDir tmp;
  TestContext t;
  EXPECT_EQ(TwiceCommandMain({"twice", "-o", tmp / "hunt", "--watch=every", "--", "true"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), HasSubstr("--watch"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "hunt/run1"));
}

TEST(TwiceCommand, AFailingJobStopsTheHuntWithExit2) {
  TempDir tmp;
  TestContext t;
  EXPECT_EQ(TwiceCommandMain({"twice", "-o", tmp / "hunt", "--", "sh", "-c", "exit 3"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), HasSubstr("exited with status 3 in run 1"));
}

TEST(TwiceCommand, HelpShowsExamples) {
  TestContext t;
  EXPECT_EQ(TwiceCommandMain({"twice", "--help"}, t.ctx), 0);
  EXPECT_THAT(t.out.str(), HasSubstr("Examples:"));
}

}  // namespace
}  // namespace numtrace::launcher
