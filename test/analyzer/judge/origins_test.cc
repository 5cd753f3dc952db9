// Tests for analyzer/judge/origins.h and data_flow.h: causes, attribution
// along run A's data flow, descendants, the first origin and DebugMode's
// hash-based flow.
#include "analyzer/judge/origins.h"

#include "analyzer/judge/data_flow.h"
#include "analyzer/judge/judge.h"
#include "gtest/gtest.h"
#include "test/analyzer/trace_builder.h"

namespace numtrace::analyzer {
namespace {

using testing::Out;
using testing::TraceBuilder;

// A buffer at `addr` holding `content` (trace_builder's content ids),
// written by the kernel; `rel` > 0 moves its l2 (another run's value).
Buffer Write(uint64_t addr, uint64_t content, double rel = 0) {
  Buffer b = Out(content);
  b.addr = addr;
  if (rel > 0) {
    b.stats.hash ^= 0x5a5a;
    b.stats.l2 *= 1 + rel;
  }
  return b;
}

// The same buffer read (role in) as `Write(addr, content, rel)` left it.
Buffer Read(uint64_t addr, uint64_t content, double rel = 0) {
  Buffer b = Write(addr, content, rel);
  b.role = Role::kIn;
  b.arg = 1;
  return b;
}

// k0 writes X; k1 reads X, writes Y; k2 reads Y, writes Z; k3 reads W,
// writes V. In B, k0 is off by `rel0`; k1 and k2 inherit it.
struct Chain {
  Trace a, b;
  DiffResult r;
};
Chain MakeChain(double rel0) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("k0", {Write(0x100, 1)});
  ta.Add("k1", {Read(0x100, 1), Write(0x200, 2)});
  ta.Add("k2", {Read(0x200, 2), Write(0x300, 3)});
  ta.Add("k3", {Read(0x400, 9), Write(0x500, 4)});
  tb.Add("k0", {Write(0x100, 1, rel0)});
  tb.Add("k1", {Read(0x100, 1, rel0), Write(0x200, 2, 0.1)});
  tb.Add("k2", {Read(0x200, 2, 0.1), Write(0x300, 3, 0.1)});
  tb.Add("k3", {Read(0x400, 9), Write(0x500, 4)});
  Chain c{ta.Build(), tb.Build(), {}};
  Alignment al;
  for (uint32_t i = 0; i < 4; ++i) al.pairs.push_back({i, i, MatchMethod::kExact});
  c.r = Judge(c.a, c.b, al);
  return c;
}

TEST(Origins, DivergedOriginAndItsDescendants) {
  Chain c = MakeChain(0.1);
  const DiffResult& r = c.r;
  EXPECT_EQ(r.verdicts[0].cause, Cause::kOrigin);
  EXPECT_EQ(r.verdicts[1].cause, Cause::kInherited);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kInherited);
  EXPECT_EQ(r.verdicts[3].cause, Cause::kNone);
  EXPECT_EQ(r.origins.count, 1u);
  EXPECT_EQ(r.origins.diverged, 1u);
  ASSERT_TRUE(r.origins.first);
  EXPECT_EQ(*r.origins.first, 0u);
  EXPECT_EQ(r.origins.descendants[0], 2u);
  ASSERT_EQ(r.origins.top.size(), 1u);
  EXPECT_EQ(r.origins.reach[0], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(*r.first_divergence, 0u);
  EXPECT_EQ(r.origins.of_first_divergence, (std::vector<uint32_t>{0}));
}

// A kernel with two inputs, only the first of which differs: inherited.
// (A rule that let the last input decide - equal here - made it an origin,
// and no test noticed: scripts/mutants.sh, origins-last-input.)
TEST(Origins, AnyDifferingInputMakesTheDifferenceInherited) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("k0", {Write(0x100, 1)});
  ta.Add("k1", {Write(0x200, 2)});
  ta.Add("k2", {Read(0x100, 1), Read(0x200, 2), Write(0x300, 3)});
  tb.Add("k0", {Write(0x100, 1, 0.1)});
  tb.Add("k1", {Write(0x200, 2)});
  tb.Add("k2", {Read(0x100, 1, 0.1), Read(0x200, 2), Write(0x300, 3, 0.1)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al;
  for (uint32_t i = 0; i < 3; ++i) al.pairs.push_back({i, i, MatchMethod::kExact});
  const DiffResult r = Judge(a, b, al);
  EXPECT_EQ(r.verdicts[0].cause, Cause::kOrigin);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kInherited);
  EXPECT_EQ(r.origins.count, 1u);
}

TEST(Origins, NoiseOriginBehindTheFirstDivergence) {
  // k0 differs by noise only; k1, fed by it, diverges: the first divergence
  // is k1 (born: its input differs within tolerance, roots.h) and the runs
  // part at k0.
  Chain c = MakeChain(1e-9);
  const DiffResult& r = c.r;
  EXPECT_EQ(r.verdicts[0].status, PairStatus::kWithinTolerance);
  EXPECT_EQ(r.verdicts[0].cause, Cause::kOrigin);
  EXPECT_EQ(*r.first_divergence, 1u);
  EXPECT_EQ(r.verdicts[1].cause, Cause::kBorn);
  EXPECT_EQ(r.origins.count, 1u);
  EXPECT_EQ(r.origins.diverged, 0u);
  EXPECT_EQ(*r.origins.first, 0u);
  EXPECT_EQ(r.origins.descendants[0], 2u);
  EXPECT_EQ(r.origins.of_first_divergence, (std::vector<uint32_t>{0}));
}

TEST(Origins, PreHashOfOverwrittenBuffersIsAnInput) {
  // An accumulating kernel: its output buffer held different contents
  // before the launch in B, so the difference is inherited.
  TraceBuilder ta("a"), tb("b");
  Buffer acc_a = Write(0x100, 1), acc_b = Write(0x100, 1, 0.1);
  acc_a.has_pre = acc_b.has_pre = true;
  acc_a.pre_hash = 7;
  acc_b.pre_hash = 8;
  ta.Add("acc", {acc_a});
  tb.Add("acc", {acc_b});
  Trace a = ta.Build(), b = tb.Build();
  EXPECT_EQ(PairCause(a, DataFlow(a), 0, b, DataFlow(b), 0), Cause::kInherited);
  a.buffers[0].pre_hash = 8;
  EXPECT_EQ(PairCause(a, DataFlow(a), 0, b, DataFlow(b), 0), Cause::kOrigin);
}

TEST(Origins, WithoutPreAnOverwrittenBufferHoldsWhatItsLastWriterLeft) {
  // An in-place add on a GEMM's output, in a trace that kept no `pre`: the
  // GEMM is the origin, the add inherits (its buffer held the GEMM's
  // output), and the difference flows on to the reader after it.
  TraceBuilder ta("a"), tb("b");
  ta.Add("gemm", {Write(0x100, 1)});
  ta.Add("add_", {Read(0x900, 5), Write(0x100, 2)});
  ta.Add("use", {Read(0x100, 2), Write(0x200, 3)});
  tb.Add("gemm", {Write(0x100, 1, 0.1)});
  tb.Add("add_", {Read(0x900, 5), Write(0x100, 2, 0.1)});
  tb.Add("use", {Read(0x100, 2, 0.1), Write(0x200, 3, 0.1)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al;
  for (uint32_t i = 0; i < 3; ++i) al.pairs.push_back({i, i, MatchMethod::kExact});
  DiffResult r = Judge(a, b, al);
  EXPECT_EQ(r.verdicts[0].cause, Cause::kOrigin);
  EXPECT_EQ(r.verdicts[1].cause, Cause::kInherited);
  EXPECT_EQ(r.verdicts[2].cause, Cause::kInherited);
  EXPECT_EQ(r.origins.count, 1u);
  EXPECT_EQ(r.origins.descendants[0], 2u);
  // A fresh output (no earlier writer of its address) is not an input.
  DataFlow flow(a);
  EXPECT_FALSE(flow.Reads(0));
  EXPECT_TRUE(flow.Reads(2));
  EXPECT_EQ(flow.InputHash(2), a.buffers[0].stats.hash);
}

TEST(Origins, UnknownWhenInputsCannotBeCompared) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("fused", {Read(0x100, 1), Write(0x200, 2)});
  tb.Add("fused", {Read(0x100, 1), Read(0x180, 5), Write(0x200, 2, 0.1)});  // other structure
  Buffer unknown = Write(0x300, 3);
  unknown.role = Role::kUnknown;  // outputs=all: nothing measured before
  ta.Add("all", {Read(0x100, 1), unknown});
  unknown.stats.hash ^= 1;
  tb.Add("all", {Read(0x100, 1), unknown});
  Trace a = ta.Build(), b = tb.Build();
  const DataFlow fa(a), fb(b);
  EXPECT_EQ(PairCause(a, fa, 0, b, fb, 0), Cause::kUnknown);
  EXPECT_EQ(PairCause(a, fa, 1, b, fb, 1), Cause::kUnknown);
}

TEST(DataFlow, LastWriterByAddressAndByHashForDebugMode) {
  TraceBuilder tb("a");
  tb.Add("w1", {Write(0x100, 1)});
  tb.Add("w2", {Write(0x100, 2)});  // overwrites 0x100
  tb.Add("r", {Read(0x100, 2), Read(0x900, 7)});
  Trace t = tb.Build();
  DataFlow flow(t);
  EXPECT_TRUE(flow.Producers(0).empty());
  ASSERT_EQ(flow.Producers(2).size(), 1u);
  EXPECT_EQ(flow.Producers(2)[0], 1u);
  // No addresses (a DebugMode log): the input's hash names its producer.
  for (Buffer& b : t.buffers) b.addr = 0;
  t.flow = FlowKey::kHashChain;
  DataFlow by_hash(t);
  ASSERT_EQ(by_hash.Producers(2).size(), 1u);
  EXPECT_EQ(by_hash.Producers(2)[0], 1u);
}

}  // namespace
}  // namespace numtrace::analyzer
