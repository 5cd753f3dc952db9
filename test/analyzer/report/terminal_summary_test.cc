#include "analyzer/report/terminal_summary.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "test/analyzer/report/report_fixture.h"

namespace numtrace::analyzer {
namespace {

using testing::RankFixture;

RankFixture Diverged() {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("void at::native::elementwise_kernel<128, 4>(int, float*)", "void at::native::elementwise_kernel<128, 4>(int, float*)",
            PairStatus::kBitwiseEqual, 0);
  f.AddPair("ctx_before", "ctx_before", PairStatus::kWithinTolerance, 2e-7);
  f.AddPair("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)",
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)", PairStatus::kDiverged, 3.1e-3);
  f.AddPair("norm", "norm", PairStatus::kNonfiniteMismatch, 1.0, MatchMethod::kExact, 4);
  f.AddOnlyA("only_in_a");
  f.Finish();
  return f;
}

TEST(TerminalSummaryTest, NamesVerdictCountsAndFirstDivergence) {
  RankFixture f = Diverged();
  f.b().truncated = true;
  f.b().path = "b.jsonl";
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {.color = false, .top = 5, .context = 2});
  EXPECT_NE(s.find("numtrace-diff: diverged"), std::string::npos) << s;
  EXPECT_NE(s.find("pairs 4: 1 bitwise equal, 1 within tolerance, 2 diverged"), std::string::npos) << s;
  EXPECT_NE(s.find("1 only in A, 0 only in B"), std::string::npos) << s;
  EXPECT_NE(s.find("matched by: override 0 exact 4 fuzzy 0 value 0"), std::string::npos) << s;
  EXPECT_NE(s.find("first divergence (values, score 310, rel diff 0.0031"), std::string::npos) << s;
  EXPECT_NE(s.find("A seq 2: cutlass::Kernel<cutlass_80_tensorop_s1688gemm>  arg 1 f32[1024]"), std::string::npos) << s;
  EXPECT_NE(s.find("A full name: void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)"),
            std::string::npos) << s;
  // Context: the two pairs before it, the short label of the first.
  EXPECT_NE(s.find("A#0 at::native::elementwise_kernel<...>"), std::string::npos) << s;
  EXPECT_NE(s.find("A#1 ctx_before"), std::string::npos) << s;
  EXPECT_NE(s.find("first NaN/Inf in A: none"), std::string::npos) << s;
  EXPECT_NE(s.find("first NaN/Inf in B: seq 3 norm"), std::string::npos) << s;
  EXPECT_NE(s.find("b.jsonl is truncated"), std::string::npos) << s;
  EXPECT_NE(s.find("largest divergences (by score):"), std::string::npos) << s;
  // Largest first: the nonfinite pair (rel 1) before the values pair.
  EXPECT_LT(s.find("A#3 norm"), s.find("A#2 cutlass::Kernel<", s.find("largest divergences (by score):"))) << s;
  EXPECT_EQ(s.find('\033'), std::string::npos) << "no ANSI codes without colour";
}

TEST(TerminalSummaryTest, ColourOnlyWhenAsked) {
  RankFixture f = Diverged();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {.color = true});
  EXPECT_NE(s.find("\033[31m"), std::string::npos);
}

TEST(TerminalSummaryTest, ShouldUseColorFollowsTtyAndNoColor) {
  unsetenv("NO_COLOR");
  EXPECT_TRUE(ShouldUseColor(ColorMode::kAuto, true));
  EXPECT_FALSE(ShouldUseColor(ColorMode::kAuto, false));
  EXPECT_TRUE(ShouldUseColor(ColorMode::kAlways, false));
  EXPECT_FALSE(ShouldUseColor(ColorMode::kNever, true));
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(ShouldUseColor(ColorMode::kAuto, true));
  EXPECT_TRUE(ShouldUseColor(ColorMode::kAlways, true));
  unsetenv("NO_COLOR");
}

TEST(TerminalSummaryTest, IdenticalSaysSoWithoutDivergenceSection) {
  RankFixture f(0, "a", "b");
  f.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  f.Finish();
  DiffReport report{"a", "b", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {});
  EXPECT_NE(s.find("numtrace-diff: identical"), std::string::npos) << s;
  EXPECT_EQ(s.find("first divergence"), std::string::npos) << s;
}

TEST(TerminalSummaryTest, RanksListedAndFirstDivergingRankDetailed) {
  RankFixture r0(0, "A/rank_0", "B/rank_0");
  r0.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  r0.Finish();
  RankFixture r1(1, "A/rank_1", "B/rank_1");
  r1.AddPair("bad_kernel", "bad_kernel", PairStatus::kDiverged, 0.2);
  r1.Finish();
  DiffReport report{"A", "B", true, {r0.Diff(), r1.Diff()}};
  std::string s = TerminalSummary(report, {});
  EXPECT_NE(s.find("2 ranks"), std::string::npos) << s;
  EXPECT_NE(s.find("rank 0: identical"), std::string::npos) << s;
  EXPECT_NE(s.find("rank 1: diverged, 1 diverged of 1 pairs"), std::string::npos) << s;
  EXPECT_NE(s.find("rank 1 (diverges first)"), std::string::npos) << s;
  EXPECT_NE(s.find("bad_kernel"), std::string::npos) << s;
}

TEST(TerminalSummaryTest, LeadsWithFirstDivergenceThenFirstOriginAndShowsUnmeasured) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddFlowPair("noise_gemm", PairStatus::kWithinTolerance, 2e-6, 0x200);
  f.AddFlowPair("heir", PairStatus::kDiverged, 1e-3, 0x300, 0x200, 1, 2);
  f.Finish();
  FooterRecord footer;
  footer.unmeasured = 7;
  footer.counters = {{"launches_seen", 120}};
  f.b().footer = footer;
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {.color = false, .top = 5, .context = 2});
  const size_t fd = s.find("first divergence (values, score 100, rel diff 0.001, cause inherited");
  const size_t fo = s.find("first origin (where the runs part: within_tolerance");
  ASSERT_NE(fd, std::string::npos) << s;
  ASSERT_NE(fo, std::string::npos) << s;
  EXPECT_LT(fd, fo);
  EXPECT_LT(fo, s.find("pairs 2:")) << "both lead, the counts come after";
  EXPECT_NE(s.find("inherited from A#0 noise_gemm"), std::string::npos) << s;
  EXPECT_NE(s.find("1 diverged kernels descend from it"), std::string::npos) << s;
  EXPECT_NE(s.find("7 kernels ran unmeasured in B"), std::string::npos) << s;
  EXPECT_NE(s.find("B counters: launches_seen 120"), std::string::npos) << s;
  EXPECT_NE(s.find("incomplete:"), std::string::npos) << s;
}

// Issue 18, item 4: a capture where most launches had no parameter layout
// compares names, not numbers - the diff must say so loudly.
TEST(TerminalSummaryTest, MostLaunchesWithoutALayoutIsAWarning) {
  RankFixture f = Diverged();
  FooterRecord footer;
  footer.counters = {{"launches_seen", 100}, {"launches_no_layout", 80}, {"ring_full", 3}};
  f.a().footer = footer;
  FooterRecord fine;
  fine.counters = {{"launches_seen", 100}, {"launches_no_layout", 10}};
  f.b().footer = fine;
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {.color = false, .top = 5, .context = 2});
  EXPECT_NE(s.find("warning: A: 80 of 100 launches had no parameter layout"), std::string::npos) << s;
  EXPECT_EQ(s.find("warning: B: 10 of 100"), std::string::npos) << "a few without a layout is no warning";
  EXPECT_NE(s.find("warning: A: 3 measurements were refused by a full device ring"), std::string::npos) << s;
}

// Issue 18, item 7: one side's buffers are allocator segments - say so.
TEST(TerminalSummaryTest, ANotAttachedTensorMapIsAWarning) {
  RankFixture f = Diverged();
  NoteRecord missing;
  missing.kind = "tensor_map";
  missing.name = "not_attached";
  missing.msg = "tensor map (PyTorch caching allocator): NOT attached; no C++ compiler";
  f.b().notes.push_back(missing);
  NoteRecord attached = missing;
  attached.name = "attached";
  f.a().notes.push_back(attached);
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {.color = false, .top = 5, .context = 2});
  EXPECT_NE(s.find("warning: B: the PyTorch tensor map was not attached"), std::string::npos) << s;
  EXPECT_EQ(s.find("warning: A: the PyTorch tensor map"), std::string::npos) << s;
}

TEST(TerminalSummaryTest, OriginsOfKnownNondeterministicFamiliesCarryTheirHint) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddFlowPair("void at::native::indexFuncSmallIndex<float, long>", PairStatus::kWithinTolerance, 2e-6, 0x200);
  f.AddFlowPair("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", PairStatus::kWithinTolerance, 2e-6, 0x300);
  f.Finish();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  std::string s = TerminalSummary(report, {.color = false, .top = 5, .context = 2});
  EXPECT_NE(s.find("index_add/scatter with atomics: "), std::string::npos) << s;
  EXPECT_NE(s.find("NCCL collective: "), std::string::npos) << s;
  // The reduce-scatter gets NCCL's hint only, never index_add's.
  EXPECT_EQ(s.find("index_add/scatter"), s.rfind("index_add/scatter")) << s;
}

}  // namespace
}  // namespace numtrace::analyzer
