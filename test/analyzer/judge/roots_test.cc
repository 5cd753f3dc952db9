// Tests for analyzer/judge/roots.h: cause born and the roots, on our own
// traces where sub-tolerance noise comes before a planted change (the case
// origins cannot answer: the planted kernel's inputs differ in their bits).
#include "analyzer/judge/roots.h"

#include "analyzer/judge/judge.h"
#include "gtest/gtest.h"
#include "test/analyzer/trace_builder.h"

namespace numtrace::analyzer {
namespace {

using testing::Out;
using testing::TraceBuilder;

// A buffer at `addr` with content id `content`; `rel` > 0 moves its l2 and
// changes its hash (another run's value).
Buffer At(uint64_t addr, uint64_t content, Role role, double rel) {
  Buffer b = Out(content);
  b.addr = addr;
  b.role = role;
  b.arg = role == Role::kIn ? 1 : 0;
  if (rel > 0) {
    b.stats.hash ^= 0x5a5a;
    b.stats.l2 *= 1 + rel;
  }
  return b;
}

// A chain k0 -> k1 -> ... -> k5, each reading what the one before wrote.
// In B: k0 and k1 carry noise far below tolerance (1e-9), k2 is the planted
// change (1e-2), k3..k5 inherit it; k6 reads nothing that differs.
struct NoisyRun {
  Trace a, b;
  DiffResult r;
};
// B's change of each kernel's output in a chain k0 -> k1 -> ... -> k5 (then k6).
NoisyRun Chain(const std::vector<double>& rel_b) {
  TraceBuilder ta("a"), tb("b");
  for (uint32_t k = 0; k < 6; ++k) {
    std::vector<Buffer> xa, xb;
    if (k > 0) {
      xa.push_back(At(0x100 * k, k, Role::kIn, 0));
      xb.push_back(At(0x100 * k, k, Role::kIn, rel_b[k - 1]));
    }
    xa.push_back(At(0x100 * (k + 1), k + 1, Role::kOut, 0));
    xb.push_back(At(0x100 * (k + 1), k + 1, Role::kOut, rel_b[k]));
    ta.Add("k" + std::to_string(k), xa);
    tb.Add("k" + std::to_string(k), xb);
  }
  ta.Add("k6", {At(0x9000, 50, Role::kOut, 0)});
  tb.Add("k6", {At(0x9000, 50, Role::kOut, 0)});
  NoisyRun run{ta.Build(), tb.Build(), {}};
  Alignment al;
  for (uint32_t i = 0; i < 7; ++i) al.pairs.push_back({i, i, MatchMethod::kExact});
  run.r = Judge(run.a, run.b, al);
  return run;
}
NoisyRun NoisyChain(double noise, double planted) {
  return Chain({noise, noise, planted, planted, planted, planted});
}

TEST(Roots, PlantedChangeAfterNoiseIsTheOnlyRoot) {
  NoisyRun run = NoisyChain(1e-9, 1e-2);
  const DiffResult& r = run.r;
  EXPECT_EQ(r.verdicts[0].status, PairStatus::kWithinTolerance);
  EXPECT_EQ(r.verdicts[0].cause, Cause::kOrigin);  // the noise is the only origin
  EXPECT_EQ(r.verdicts[1].cause, Cause::kInherited);
  EXPECT_EQ(r.verdicts[2].status, PairStatus::kDiverged);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kBorn);     // inputs differ, within tolerance
  EXPECT_EQ(r.verdicts[3].cause, Cause::kInherited);  // its input is beyond tolerance
  EXPECT_EQ(r.origins.count, 1u);
  EXPECT_EQ(r.origins.diverged, 0u);  // origins alone point only at noise
  ASSERT_TRUE(r.first_divergence);
  EXPECT_EQ(*r.first_divergence, 2u);
  EXPECT_EQ(r.roots.count, 1u);
  ASSERT_TRUE(r.roots.first);
  EXPECT_EQ(*r.roots.first, 2u);
  ASSERT_FALSE(r.roots.top.empty());
  EXPECT_EQ(r.roots.top[0], 2u);
  EXPECT_EQ(r.roots.descendants[2], 3u);  // k3, k4, k5
  EXPECT_EQ(r.roots.descendants[3], 0u);
}

// Two independent changes, the smaller one first: origins and roots both
// name the earlier one `first` (what to read first) and put the larger one
// at the head of `top` (what matters most).
TEST(Roots, FirstIsTheEarliestInATopTheLargestScore) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("small", {At(0x100, 1, Role::kOut, 0)});
  tb.Add("small", {At(0x100, 1, Role::kOut, 1e-2)});
  ta.Add("large", {At(0x200, 2, Role::kOut, 0)});
  tb.Add("large", {At(0x200, 2, Role::kOut, 1e-1)});
  const Trace a = ta.Build(), b = tb.Build();
  Alignment al;
  for (uint32_t i = 0; i < 2; ++i) al.pairs.push_back({i, i, MatchMethod::kExact});
  const DiffResult r = Judge(a, b, al);
  ASSERT_GT(r.verdicts[1].score, r.verdicts[0].score);
  for (const RankedPairs* set : {static_cast<const RankedPairs*>(&r.origins), static_cast<const RankedPairs*>(&r.roots)}) {
    EXPECT_EQ(set->count, 2u);
    ASSERT_TRUE(set->first);
    EXPECT_EQ(*set->first, 0u);
    ASSERT_EQ(set->top.size(), 2u);
    EXPECT_EQ(set->top[0], 1u);
    EXPECT_EQ(set->top[1], 0u);
  }
}

TEST(Roots, BitwiseEqualUpToTheChangeGivesAnOriginRoot) {
  NoisyRun run = NoisyChain(0, 1e-2);
  const DiffResult& r = run.r;
  EXPECT_EQ(r.verdicts[0].cause, Cause::kNone);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kOrigin);
  EXPECT_EQ(r.roots.count, 1u);
  EXPECT_EQ(*r.roots.first, 2u);
  EXPECT_EQ(r.roots.descendants[2], 3u);
}

TEST(Roots, NoDivergenceNoRoot) {
  NoisyRun run = NoisyChain(1e-9, 1e-9);
  EXPECT_EQ(run.r.roots.count, 0u);
  EXPECT_FALSE(run.r.roots.first);
  EXPECT_TRUE(run.r.roots.top.empty());
}

// The one root is pair `root`, with `descendants` later diverged pairs.
void ExpectOneRoot(const DiffResult& r, uint32_t root, uint32_t descendants) {
  EXPECT_EQ(r.roots.count, 1u);
  ASSERT_TRUE(r.roots.first);
  EXPECT_EQ(*r.roots.first, root);
  EXPECT_EQ(r.roots.descendants[root], descendants);
}

TEST(Roots, ADivergenceThroughAPairWithinToleranceIsNotBornAgain) {
  // k1 is an operator whose statistics hide the change it passes on
  // (masked_fill with -1e9: the masked entries rule them): within
  // tolerance, yet what k2 computes from it diverges again. One root, k0.
  NoisyRun run = Chain({1e-2, 1e-9, 1e-2, 1e-2, 1e-2, 1e-2});
  const DiffResult& r = run.r;
  EXPECT_EQ(r.verdicts[0].cause, Cause::kOrigin);
  EXPECT_EQ(r.verdicts[1].status, PairStatus::kWithinTolerance);
  EXPECT_EQ(r.verdicts[2].status, PairStatus::kDiverged);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kInherited);
  ExpectOneRoot(r, 0, 4);  // k2..k5
}

TEST(Roots, AnOpOnlyOneRunRanIsRootedAtTheFirstPairReadingIt) {
  // A's dropout (mul) is gone from B (eval()): B's add reads mm's output
  // where A's read the dropout's. The add is the one root.
  TraceBuilder ta("a"), tb("b");
  ta.AddOp("aten::mm", {At(0x100, 1, Role::kOut, 0)});
  ta.AddOp("aten::mul", {At(0x100, 1, Role::kIn, 0), At(0x200, 2, Role::kOut, 0)});
  ta.AddOp("aten::add", {At(0x200, 2, Role::kIn, 0), At(0x300, 3, Role::kOut, 0)});
  ta.AddOp("aten::relu", {At(0x300, 3, Role::kIn, 0), At(0x400, 4, Role::kOut, 0)});
  tb.AddOp("aten::mm", {At(0x100, 1, Role::kOut, 0)});
  tb.AddOp("aten::add", {At(0x100, 1, Role::kIn, 0), At(0x300, 5, Role::kOut, 0)});
  tb.AddOp("aten::relu", {At(0x300, 5, Role::kIn, 0), At(0x400, 6, Role::kOut, 0)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al{{{0, 0, MatchMethod::kExact}, {2, 1, MatchMethod::kExact}, {3, 2, MatchMethod::kExact}}, {1}, {}, {}};
  DiffResult r = Judge(a, b, al);
  EXPECT_EQ(r.verdicts[1].cause, Cause::kBorn);
  ExpectOneRoot(r, 1, 1);  // the relu
}

TEST(Roots, ABackwardOpShapedByTheForwardIsNoSecondRoot) {
  // The loss's sub broadcasts to another shape in B (a root of layout); the
  // backward's expand of the gradient (equal inputs: ones) takes that shape
  // from autograd, through no tensor. One root, the sub.
  auto out = [](uint64_t addr, uint64_t content, uint64_t n) {
    Buffer b = Out(content, n);
    b.addr = addr;
    return b;
  };
  TraceBuilder ta("a"), tb("b");
  ta.AddOp("aten::sub", {At(0x100, 1, Role::kIn, 0), out(0x200, 2, 32)}, Phase::kForward);
  tb.AddOp("aten::sub", {At(0x100, 1, Role::kIn, 0), out(0x200, 3, 128)}, Phase::kForward);
  ta.AddOp("aten::expand", {At(0x900, 9, Role::kIn, 0), out(0x300, 4, 32)}, Phase::kBackward);
  tb.AddOp("aten::expand", {At(0x900, 9, Role::kIn, 0), out(0x300, 5, 128)}, Phase::kBackward);
  Trace a = ta.Build(), b = tb.Build();
  DiffResult r = Judge(a, b, Alignment{{{0, 0, MatchMethod::kExact}, {1, 1, MatchMethod::kExact}}, {}, {}, {}});
  EXPECT_EQ(r.verdicts[0].status, PairStatus::kLayoutMismatch);
  EXPECT_EQ(r.verdicts[1].status, PairStatus::kLayoutMismatch);
  EXPECT_EQ(r.verdicts[1].cause, Cause::kOrigin);  // what it read is equal
  ExpectOneRoot(r, 0, 1);
}

TEST(Roots, AComputationOnAnotherDtypeIsRootedAtItsFirstOpNotAtAView) {
  // B casts to bf16 (ops A does not have), transposes (a view) and runs
  // the matmul in bf16, then casts back. The root is the matmul.
  auto t = [](uint64_t addr, uint64_t content, Role role, DType dtype = DType::kF32) {
    Buffer b = Out(content, 32, dtype);
    b.addr = addr;
    b.role = role;
    return b;
  };
  TraceBuilder ta("a"), tb("b");
  for (TraceBuilder* x : {&ta, &tb}) x->AddOp("aten::split", {t(0x100, 1, Role::kOut)});
  ta.AddOp("aten::transpose", {t(0x100, 1, Role::kIn), t(0x100, 2, Role::kOut)});
  ta.AddOp("aten::bmm", {t(0x100, 2, Role::kIn), t(0x200, 3, Role::kOut)});
  ta.AddOp("aten::relu", {t(0x200, 3, Role::kIn), t(0x300, 4, Role::kOut)});
  tb.AddOp("aten::_to_copy", {t(0x100, 1, Role::kIn), t(0x500, 7, Role::kOut, DType::kBF16)});
  tb.AddOp("aten::transpose", {t(0x500, 7, Role::kIn, DType::kBF16), t(0x500, 8, Role::kOut, DType::kBF16)});
  tb.AddOp("aten::bmm", {t(0x500, 8, Role::kIn, DType::kBF16), t(0x200, 9, Role::kOut, DType::kBF16)});
  tb.AddOp("aten::_to_copy", {t(0x200, 9, Role::kIn, DType::kBF16), t(0x600, 10, Role::kOut)});
  tb.AddOp("aten::relu", {t(0x600, 10, Role::kIn), t(0x300, 11, Role::kOut)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al{{{0, 0, MatchMethod::kExact}, {1, 2, MatchMethod::kFuzzy}, {2, 3, MatchMethod::kFuzzy},
                {3, 5, MatchMethod::kExact}},
               {},
               {1, 4},
               {}};
  DiffResult r = Judge(a, b, al);
  EXPECT_EQ(r.verdicts[1].status, PairStatus::kLayoutMismatch);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kBorn);
  ExpectOneRoot(r, 2, 1);  // the relu
}

TEST(Roots, AnInputBeyondToleranceWithoutAProducerIsInherited) {
  // k0 reads a buffer nobody in the trace wrote (a parameter loaded
  // differently): its input compared directly is beyond tolerance.
  TraceBuilder ta("a"), tb("b");
  ta.Add("k0", {At(0x100, 1, Role::kIn, 0), At(0x200, 2, Role::kOut, 0)});
  tb.Add("k0", {At(0x100, 1, Role::kIn, 1e-2), At(0x200, 2, Role::kOut, 1e-2)});
  Trace a = ta.Build(), b = tb.Build();
  DiffResult r = Judge(a, b, Alignment{{{0, 0, MatchMethod::kExact}}, {}, {}, {}});
  EXPECT_EQ(r.verdicts[0].cause, Cause::kInherited);
  EXPECT_EQ(r.roots.count, 0u);
}

}  // namespace
}  // namespace numtrace::analyzer
