// Tests for analyzer/judge/judge.h: verdicts, counts, first divergence, first
// NaN/Inf and top divergences on traces with known differences.
#include "analyzer/judge/judge.h"

#include <string>

#include "analyzer/align/aligner.h"
#include "gtest/gtest.h"
#include "test/analyzer/trace_builder.h"

namespace numtrace::analyzer {
namespace {

using testing::In;
using testing::Out;
using testing::TraceBuilder;

// Output `content` with its l2 off by `rel` (and a different hash).
Buffer Off(uint64_t content, double rel) {
  Buffer b = Out(content);
  b.stats.hash ^= 0xabc;
  b.stats.l2 *= 1 + rel;
  return b;
}

TEST(Judge, IdenticalTraces) {
  TraceBuilder ta("a"), tb("b");
  for (int i = 0; i < 10; ++i) {
    const std::string name = std::string("k").append(std::to_string(i % 3));
    ta.Add(name, {In(64), Out(i)});
    tb.Add(name, {In(64), Out(i)});
  }
  Trace a = ta.Build(), b = tb.Build();
  DiffResult r = Judge(a, b, Align(a, b));
  EXPECT_EQ(r.verdict, Verdict::kIdentical);
  EXPECT_EQ(r.counts.pairs, 10u);
  EXPECT_EQ(r.counts.bitwise_equal, 10u);
  EXPECT_EQ(r.counts.by_method[static_cast<int>(MatchMethod::kExact)], 10u);
  EXPECT_FALSE(r.first_divergence);
  EXPECT_FALSE(r.first_nonfinite_a);
  EXPECT_TRUE(r.top_divergences.empty());
  ASSERT_EQ(r.verdicts.size(), r.alignment.pairs.size());
}

TEST(Judge, FirstDivergenceTopNAndNoise) {
  TraceBuilder ta("a"), tb("b");
  for (int i = 0; i < 12; ++i) ta.Add("k", {Out(i)});
  for (int i = 0; i < 12; ++i) {
    if (i == 2) tb.Add("k", {Off(i, 1e-7)});       // noise
    else if (i == 5) tb.Add("k", {Off(i, 1e-3)});  // diverged
    else if (i == 8) tb.Add("k", {Off(i, 5e-2)});  // diverged more
    else tb.Add("k", {Out(i)});
  }
  Trace a = ta.Build(), b = tb.Build();
  JudgeOptions options;
  options.top_n = 1;
  DiffResult r = Judge(a, b, Align(a, b), options);
  EXPECT_EQ(r.verdict, Verdict::kDiverged);
  EXPECT_EQ(r.counts.within_tolerance, 1u);
  EXPECT_EQ(r.counts.diverged, 2u);
  EXPECT_EQ(r.counts.bitwise_equal, 9u);
  ASSERT_TRUE(r.first_divergence);
  EXPECT_EQ(r.alignment.pairs[*r.first_divergence].a, 5u);
  EXPECT_EQ(r.verdicts[*r.first_divergence].status, PairStatus::kDiverged);
  EXPECT_NEAR(r.verdicts[*r.first_divergence].rel_diff, 1e-3 / (1 + 1e-3), 1e-9);
  ASSERT_EQ(r.top_divergences.size(), 1u);
  EXPECT_EQ(r.alignment.pairs[r.top_divergences[0]].a, 8u);
  EXPECT_EQ(r.verdicts[2].status, PairStatus::kWithinTolerance);
  // A looser tolerance turns the 1e-3 pair into noise too.
  options.tolerance.rtol = 1e-2;
  DiffResult loose = Judge(a, b, Align(a, b), options);
  EXPECT_EQ(loose.counts.diverged, 1u);
  EXPECT_EQ(loose.alignment.pairs[*loose.first_divergence].a, 8u);
}

TEST(Judge, NonfiniteLayoutAndFirstNonfinitePerRun) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("k0", {Out(0)});
  ta.Add("k1", {Out(1)});
  ta.Add("k2", {Out(2)});
  Buffer nan = Out(1);
  nan.stats.hash ^= 1;
  nan.stats.nan = 3;
  tb.Add("k0", {Out(0)});
  tb.Add("k1", {nan});
  tb.Add("k2", {Out(2, 2048)});  // other size
  Trace a = ta.Build(), b = tb.Build();
  DiffResult r = Judge(a, b, Align(a, b));
  EXPECT_EQ(r.verdict, Verdict::kDiverged);
  EXPECT_EQ(r.verdicts[1].status, PairStatus::kNonfiniteMismatch);
  EXPECT_EQ(r.verdicts[2].status, PairStatus::kLayoutMismatch);
  EXPECT_EQ(r.verdicts[1].a_buffer, 0);
  EXPECT_FALSE(r.first_nonfinite_a);
  ASSERT_TRUE(r.first_nonfinite_b);
  EXPECT_EQ(*r.first_nonfinite_b, 1u);
  EXPECT_EQ(r.alignment.pairs[*r.first_divergence].a, 1u);
}

TEST(Judge, UnmatchedKernelsMakeWithinToleranceNotIdentical) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("k0", {Out(0)});
  ta.Add("k1", {Out(1)});
  tb.Add("k0", {Out(0)});
  tb.Add("extra_fill", {Out(77)});
  tb.Add("k1", {Out(1)});
  Trace a = ta.Build(), b = tb.Build();
  DiffResult r = Judge(a, b, Align(a, b));
  EXPECT_EQ(r.verdict, Verdict::kWithinTolerance);
  EXPECT_EQ(r.counts.only_b, 1u);
  EXPECT_EQ(r.counts.bitwise_equal, 2u);
}

TEST(Judge, FusedPairComparesOnlyCorrespondingOutputs) {
  // A's add writes its output and a saved activation; B's fused kernel
  // writes only the output, bitwise equal: the pair is equal, not a layout
  // mismatch. An exact pair with a missing output is a layout mismatch.
  TraceBuilder ta("a"), tb("b");
  ta.Add("add", {Out(5), Out(6, 256, DType::kF32, 2)});
  tb.Add("triton_poi_fused_add_mul_0", {In(64), Out(5)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al;
  al.pairs.push_back({0, 0, MatchMethod::kValue});
  DiffResult r = Judge(a, b, al);
  EXPECT_EQ(r.verdicts[0].status, PairStatus::kBitwiseEqual);
  EXPECT_EQ(r.verdict, Verdict::kIdentical);
  al.pairs[0].method = MatchMethod::kExact;
  EXPECT_EQ(Judge(a, b, al).verdicts[0].status, PairStatus::kLayoutMismatch);
}

TEST(Judge, FusedTritonKernelsWithRawDtypeAreEqualNotLayout) {
  // The case: 400 eager kernels in A; in B 16 pairs of them (add,
  // then mul) are one fused Triton kernel captured without hooks, so its
  // output is `raw` although its bytes are exactly A's mul output.
  TraceBuilder ta("a"), tb("b");
  int fused = 0;
  for (int i = 0; i < 400; ++i) {
    const bool fuse_here = i % 25 == 0 && fused < 16;
    if (fuse_here) {
      ta.Add("add_kernel", {In(4096, DType::kF32, 1), Out(1000 + i)});
      ta.Add("mul_kernel", {In(4096, DType::kF32, 1), Out(i)});
      Buffer raw = Out(i);
      raw.dtype = DType::kRaw;
      raw.stats = {};
      raw.stats.n = raw.bytes;
      raw.stats.hash = Out(i).stats.hash;
      tb.Add("triton_poi_fused_add_mul_" + std::to_string(fused), {In(4096, DType::kRaw, 1), raw});
      ++fused;
      ++i;
    } else {
      ta.Add("k" + std::to_string(i % 7), {In(64), Out(i)});
      tb.Add("k" + std::to_string(i % 7), {In(64), Out(i)});
    }
  }
  Trace a = ta.Build(), b = tb.Build();
  ASSERT_EQ(fused, 16);
  ASSERT_EQ(a.kernels.size(), 400u);
  DiffResult r = Judge(a, b, Align(a, b));
  EXPECT_EQ(r.counts.diverged, 0u);
  EXPECT_FALSE(r.first_divergence);
  EXPECT_EQ(r.counts.by_method[static_cast<int>(MatchMethod::kValue)], 16u);
  EXPECT_EQ(r.counts.bitwise_equal, r.counts.pairs);
  EXPECT_EQ(r.counts.only_a, 16u);  // the add kernels, fused away
  EXPECT_NE(r.verdict, Verdict::kDiverged);
}

TEST(Judge, EqualSizeOtherDtypeDifferentBytesIsReportedNotHidden) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("triton_poi_fused_0", {Out(1)});
  Buffer raw = Out(2);
  raw.dtype = DType::kRaw;
  raw.stats.n = raw.bytes;
  tb.Add("triton_poi_fused_0", {raw});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al;
  al.pairs.push_back({0, 0, MatchMethod::kValue});
  DiffResult r = Judge(a, b, al);
  EXPECT_EQ(r.verdicts[0].status, PairStatus::kDiverged);
  EXPECT_EQ(a.buffers[r.verdicts[0].a_buffer].dtype, DType::kF32);
  EXPECT_EQ(b.buffers[r.verdicts[0].b_buffer].dtype, DType::kRaw);
}

TEST(Judge, Names) {
  EXPECT_EQ(VerdictName(Verdict::kIdentical), "identical");
  EXPECT_EQ(VerdictName(Verdict::kWithinTolerance), "within_tolerance");
  EXPECT_EQ(VerdictName(Verdict::kDiverged), "diverged");
  EXPECT_EQ(PairStatusName(PairStatus::kBitwiseEqual), "bitwise_equal");
  EXPECT_EQ(PairStatusName(PairStatus::kWithinTolerance), "within_tolerance");
  EXPECT_EQ(PairStatusName(PairStatus::kDiverged), "values");
  EXPECT_EQ(PairStatusName(PairStatus::kNonfiniteMismatch), "nonfinite");
  EXPECT_EQ(PairStatusName(PairStatus::kLayoutMismatch), "layout");
  EXPECT_EQ(MatchMethodName(MatchMethod::kOverride), "override");
  EXPECT_EQ(MatchMethodName(MatchMethod::kExact), "exact");
  EXPECT_EQ(MatchMethodName(MatchMethod::kFuzzy), "fuzzy");
  EXPECT_EQ(MatchMethodName(MatchMethod::kValue), "value");
}

}  // namespace
}  // namespace numtrace::analyzer
