#include "analyzer/ranks/cross_rank.h"

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>

#include "analyzer/cli/diff_command.h"
#include "analyzer/report/cross_rank_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/analyzer/report/chromium.h"
#include "test/analyzer/trace_builder.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

using ::testing::HasSubstr;
using testing::In;
using testing::Out;
using testing::TraceBuilder;

// A data-parallel step: forward/backward on each rank's own data (inputs
// differ across ranks), the gradient all-reduce, then the optimizer update
// on equal gradients.
Trace Rank(int64_t rank, uint64_t update_output, uint64_t data, bool nan_in_loss = false) {
  TraceBuilder tb("rank_" + std::to_string(rank) + ".ntrace.jsonl");
  Buffer x = In(4096);
  x.stats.hash = 1000 + data;  // the rank's own batch
  tb.Add("ampere_sgemm_64x32_sliced1x4_nn", {x, Out(10 + data, 1024, DType::kF32, 2)});
  Buffer loss = Out(20 + data, 1, DType::kF32, 1);
  if (nan_in_loss) loss.stats.nan = 1;
  Buffer logits = In(4096);
  logits.stats.hash = 2000 + data;  // computed from the rank's batch
  tb.Add("nll_loss_forward_reduce_cuda_kernel_2d", {logits, loss});
  tb.Add("ncclDevKernel_AllReduce_Sum_f32_RING_LL", {Out(30, 1024, DType::kF32, 0)});
  tb.Add("void at::native::multi_tensor_apply_kernel<adam>", {In(4096), Out(update_output, 1024, DType::kF32, 3)});
  Trace t = tb.Build();
  t.rank = rank;
  return t;
}

TEST(CrossRank, ReplicasThatAgreeAfterTheReductionAreConsistent) {
  Trace r0 = Rank(0, 40, 0), r1 = Rank(1, 40, 1);
  CrossRankResult r = CompareAcrossRanks({&r0, &r1});
  EXPECT_TRUE(r.mismatches.empty());
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[1].shared, 4u);
  // GEMM and loss differ (different data) but their inputs differ too: not a mismatch.
  EXPECT_EQ(r.ranks[1].outputs_differ, 2u);
  EXPECT_EQ(r.ranks[1].outputs_equal, 2u);
  EXPECT_EQ(r.ranks[1].not_judged, 1u);  // the all-reduce has no input buffer
  EXPECT_EQ(CrossRankVerdict(r), "consistent");
}

TEST(CrossRank, AnInPlaceKernelOnABufferThatAlreadyDifferedIsNoOrigin) {
  // An in-place update (its parameter buffer is overwritten: `pre` kept)
  // with equal role-in inputs: when the buffer already differed before the
  // launch, the differing output is inherited, not a replica mismatch.
  auto rank = [](int64_t r, uint64_t pre, uint64_t out) {
    TraceBuilder tb("rank_" + std::to_string(r) + ".ntrace.jsonl");
    Buffer param = Out(out, 1024, DType::kF32, 0);
    param.has_pre = true;
    param.pre_hash = pre;
    tb.Add("void at::native::multi_tensor_apply_kernel<adam>", {In(4096), param});
    Trace t = tb.Build();
    t.rank = r;
    return t;
  };
  Trace r0 = rank(0, 7, 40), r1 = rank(1, 8, 41);
  EXPECT_TRUE(CompareAcrossRanks({&r0, &r1}).mismatches.empty());
  Trace r2 = rank(2, 7, 41);  // same parameter before, other result: a mismatch
  EXPECT_EQ(CompareAcrossRanks({&r0, &r2}).mismatches.size(), 1u);
}

TEST(CrossRank, AnUpdateThatDiffersOnEqualInputsIsReportedWithItsRank) {
  Trace r0 = Rank(0, 40, 0), r1 = Rank(1, 40, 1), r2 = Rank(2, 41, 2);
  CrossRankResult r = CompareAcrossRanks({&r0, &r1, &r2});
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].rank, 2);
  EXPECT_EQ(r.mismatches[0].seq, 3u);
  EXPECT_EQ(r.mismatches[0].arg, 3u);
  EXPECT_THAT(r.mismatches[0].name, HasSubstr("multi_tensor_apply_kernel"));
  EXPECT_EQ(r.ranks[1].inputs_equal_outputs_differ, 0u);
  EXPECT_EQ(r.ranks[2].inputs_equal_outputs_differ, 1u);
  EXPECT_EQ(CrossRankVerdict(r), "replicas_differ");
}

TEST(CrossRank, TheFirstNanAcrossRanksNamesItsRank) {
  Trace r0 = Rank(0, 40, 0), r1 = Rank(1, 40, 1), r2 = Rank(2, 40, 2, /*nan_in_loss=*/true);
  CrossRankResult r = CompareAcrossRanks({&r0, &r1, &r2});
  ASSERT_TRUE(r.first_nonfinite.has_value());
  EXPECT_EQ(r.first_nonfinite->rank, 2);
  EXPECT_EQ(r.first_nonfinite->seq, 1u);
  EXPECT_FALSE(r.ranks[0].first_nonfinite.has_value());
  ASSERT_TRUE(r.ranks[2].first_nonfinite.has_value());
}

TEST(CrossRankReport, JsonHasTheDocumentedShape) {
  Trace r0 = Rank(0, 40, 0), r1 = Rank(1, 41, 1, true);
  CrossRankResult r = CompareAcrossRanks({&r0, &r1});
  std::string json = CrossRankJson(r, "run");
  EXPECT_THAT(json, HasSubstr(R"({"format":"numtrace-cross-rank","version":1,"dir":"run","reference_rank":0,"verdict":"replicas_differ","ranks":[{"rank":0,)"));
  EXPECT_THAT(json, HasSubstr(R"("inputs_equal_outputs_differ":1,"not_judged":1,"first_nonfinite":{"rank":1,"seq":1,"ref_seq":1,"arg":1,"name":"nll_loss_forward_reduce_cuda_kernel_2d"}})"));
  EXPECT_THAT(json, HasSubstr(R"("mismatches":[{"rank":1,"seq":3,"ref_seq":3,"arg":3,"name":"void at::native::multi_tensor_apply_kernel<adam>"}])"));
  std::string html = CrossRankHtml(r, "run");
  EXPECT_THAT(html, HasSubstr("<select id=\"rank\">"));
  EXPECT_THAT(html, HasSubstr("\"verdict\":\"replicas_differ\""));
  // The page's colour and word: the verdict's, coloured as a diverged diff.
  EXPECT_THAT(html, HasSubstr(R"(<span id="verdict" class="badge v-diverged">replicas differ</span>)"));
  EXPECT_THAT(CrossRankTerminal(r, "run", 10), HasSubstr("first NaN/Inf across ranks: rank 1 seq 1"));
}

// The page draws the JSON document it embeds: the picked rank (1, the
// first compared with the reference) with its mismatch, names as text.
TEST(CrossRankReport, ThePageDrawsItsDocumentInABrowser) {
  if (numtrace::analyzer::testing::Chromium().empty()) GTEST_SKIP() << "chromium not installed";
  Trace r0 = Rank(0, 40, 0), r1 = Rank(1, 41, 1, true);
  CrossRankResult r = CompareAcrossRanks({&r0, &r1});
  const std::string dom = numtrace::analyzer::testing::DumpDom(CrossRankHtml(r, "run<dir>"), "cross_rank_page.html");
  EXPECT_THAT(dom, HasSubstr(R"(<html lang="en" data-ready="1">)")) << dom.substr(0, 2000);
  EXPECT_THAT(dom, HasSubstr("<title>numtrace-diff --across-ranks: run&lt;dir&gt;</title>"));
  EXPECT_THAT(dom, HasSubstr(R"(<option value="1" selected="">rank 1 (1 mismatches)</option>)"));
  EXPECT_THAT(dom, HasSubstr("<th>rank 1</th>"));
  EXPECT_THAT(dom, HasSubstr("<td>inputs equal, outputs differ</td><td>1</td>"));
  EXPECT_THAT(dom, HasSubstr("<td>3</td><td>3</td><td>3</td><td>void at::native::multi_tensor_apply_kernel&lt;adam&gt;</td>"));
  EXPECT_THAT(dom, HasSubstr("rank 1 seq 1 arg 1 nll_loss_forward_reduce_cuda_kernel_2d"));
}

// The command: numtrace-diff --across-ranks on traces the simulated job
// wrote for two ranks, once deterministic and once with its atomics-style
// bias gradients (the replicas then disagree where their inputs agree).
class AcrossRanksCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("numtrace-xr-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Capture(const std::string& sub, int rank, const std::string& flags) {
    std::string cmd = "RANK=" + std::to_string(rank) + " NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR=" +
                      (dir_ / sub).string() + " " + NUMTRACE_BINARY_DIR + "/bin/numtrace-sim --steps 2 " +
                      flags + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  int Run(std::vector<std::string> args, std::string* out, std::string* err) {
    std::vector<const char*> argv = {"numtrace-diff"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::ostringstream o, e;
    int code = DiffMain(static_cast<int>(argv.size()), argv.data(), o, e, false);
    *out = o.str();
    *err = e.str();
    return code;
  }
  std::filesystem::path dir_;
};

TEST_F(AcrossRanksCommand, ConsistentRanksExit0AndDisagreeingReplicasExit1) {
  Capture("ok", 0, "");
  Capture("ok", 1, "");
  Capture("bad", 0, "--nondeterministic");
  Capture("bad", 1, "--nondeterministic");
  std::string out, err;
  EXPECT_EQ(Run({"--across-ranks", (dir_ / "ok").string()}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("verdict: consistent"));
  const std::string json = (dir_ / "r.json").string(), html = (dir_ / "r.html").string();
  EXPECT_EQ(Run({"--across-ranks", (dir_ / "bad").string(), "--json", json, "-o", html}, &out, &err), 1) << err;
  EXPECT_THAT(out, HasSubstr("verdict: replicas_differ"));
  EXPECT_THAT(out, HasSubstr("rank 1 seq 9 (rank 0 seq 9) arg 1  void at::native::indexFuncSmallIndex"));
  EXPECT_TRUE(std::filesystem::exists(json));
  EXPECT_TRUE(std::filesystem::exists(html));
}

// Issue 15: the words said "rank 0" when the reference rank was 1.
TEST_F(AcrossRanksCommand, TheWordsNameTheReferenceRankActuallyUsed) {
  Capture("r12", 1, "--nondeterministic");
  Capture("r12", 2, "--nondeterministic");
  std::string out, err;
  EXPECT_EQ(Run({"--across-ranks", (dir_ / "r12").string()}, &out, &err), 1) << err;
  EXPECT_THAT(out, HasSubstr("rank 1 as reference"));
  EXPECT_THAT(out, HasSubstr("inputs bitwise equal to rank 1's but different outputs"));
  EXPECT_THAT(out, HasSubstr("rank 2 seq 9 (rank 1 seq 9) arg 1"));
  EXPECT_EQ(out.find("rank 0"), std::string::npos) << out;
}

TEST_F(AcrossRanksCommand, BadUsageIsOneLineAndExit2) {
  Capture("one", 0, "");
  std::string out, err;
  EXPECT_EQ(Run({"--across-ranks", (dir_ / "one").string()}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("--across-ranks needs at least two"));
  EXPECT_EQ(Run({"--across-ranks", (dir_ / "missing").string()}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("needs a run directory"));
  EXPECT_EQ(Run({"a", "--across-ranks", (dir_ / "one").string()}, &out, &err), 2);
  EXPECT_EQ(Run({}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("A and B are required"));
}

}  // namespace
}  // namespace numtrace::analyzer
