// Tests for analyzer/judge/same_math.h: run B computes `mm` + `add` where A
// had one `addmm` (operator-level traces and their alignment built by
// hand): no false divergence when the two runs of ops compute the same from
// the same inputs, the divergence kept when they do not.
#include "analyzer/judge/same_math.h"

#include "analyzer/judge/judge.h"
#include "gtest/gtest.h"
#include "test/analyzer/trace_builder.h"

namespace numtrace::analyzer {
namespace {

using testing::Out;
using testing::TraceBuilder;

// A tensor at `addr` holding `content` (trace_builder.h's content ids).
Buffer T(uint64_t addr, uint64_t content, Role role) {
  Buffer b = Out(content);
  b.addr = addr;
  b.role = role;
  return b;
}

// x (content 1) and w (2) made by two ops, the bias (3 in A, `b_bias` in B)
// a parameter read by no producer (`bias_op`: made by a third op, 3 in A);
// A: addmm(bias, x, w) -> 10; B: mm(x, w) -> 20, add(that, bias) -> `b_sum`;
// then gelu of the sum in both -> 11 (B's `b_gelu`).
struct RefactorRun {
  Trace a, b;
  DiffResult r;
};
RefactorRun Refactor(uint64_t b_bias, uint64_t b_sum, uint64_t b_gelu, bool bias_op = false) {
  TraceBuilder ta("a"), tb("b");
  for (TraceBuilder* t : {&ta, &tb}) {
    t->AddOp("aten::randn", {T(0x100, 1, Role::kOut)});
    t->AddOp("aten::randn", {T(0x200, 2, Role::kOut)});
    if (bias_op) t->AddOp("aten::zeros", {T(0x300, t == &ta ? 3 : b_bias, Role::kOut)});
  }
  ta.AddOp("aten::addmm", {T(0x300, 3, Role::kIn), T(0x100, 1, Role::kIn), T(0x200, 2, Role::kIn),
                             T(0x400, 10, Role::kOut)});
  ta.AddOp("aten::gelu", {T(0x400, 10, Role::kIn), T(0x500, 11, Role::kOut)});
  tb.AddOp("aten::mm", {T(0x100, 1, Role::kIn), T(0x200, 2, Role::kIn), T(0x400, 20, Role::kOut)});
  tb.AddOp("aten::add", {T(0x400, 20, Role::kIn), T(0x300, b_bias, Role::kIn), T(0x600, b_sum, Role::kOut)});
  tb.AddOp("aten::gelu", {T(0x600, b_sum, Role::kIn), T(0x500, b_gelu, Role::kOut)});
  RefactorRun run{ta.Build(), tb.Build(), {}};
  // As the aligner paired the real runs (ops_model.py, BUG=refactor): addmm
  // with mm by their close outputs, B's add left unpaired.
  const uint32_t n = bias_op ? 3 : 2;
  Alignment al;
  for (uint32_t i = 0; i < n; ++i) al.pairs.push_back({i, i, MatchMethod::kExact});
  al.pairs.push_back({n, n, MatchMethod::kValue});
  al.pairs.push_back({n + 1, n + 2, MatchMethod::kExact});
  al.only_b = {n + 1};
  run.r = Judge(run.a, run.b, al);
  return run;
}

TEST(SameMath, MmPlusAddAgainstAddmmIsNoDivergence) {
  RefactorRun run = Refactor(3, 10, 11);
  EXPECT_EQ(run.r.verdicts[2].status, PairStatus::kWithinTolerance);  // its own bytes differ
  EXPECT_NE(run.r.verdict, Verdict::kDiverged);
  EXPECT_EQ(run.r.counts.diverged, 0u);
  EXPECT_EQ(run.r.roots.count, 0u);
}

TEST(SameMath, AnotherSumStillDiverges) {
  // B adds the same bias but gets another sum (a wrong add): not the same math.
  RefactorRun run = Refactor(3, 12, 13);
  EXPECT_EQ(run.r.verdict, Verdict::kDiverged);
  ASSERT_TRUE(run.r.first_divergence);
  EXPECT_EQ(*run.r.first_divergence, 2u);
}

TEST(SameMath, TheSameSumFromOtherInputsStillDiverges) {
  // B's bias differs, yet its sum happens to equal A's: the groups do not
  // read the same inputs, so the pairs inside keep their own verdicts.
  RefactorRun run = Refactor(4, 10, 11);
  EXPECT_EQ(run.r.verdict, Verdict::kDiverged);
}

}  // namespace
}  // namespace numtrace::analyzer
