// The records Engine::Pump writes, built from complete pending entries
// directly (record_builder.h): a kernel buffer's role from its hashes before
// and after, every field copied from the capture, an operator's outputs given
// their `pre`, and the drop notes.
#include "shim/engine/record_builder.h"

#include <gtest/gtest.h>

namespace numtrace::shim {
namespace {

BufferStats Stats(uint64_t n, uint64_t hash, double sum) {
  BufferStats s;
  s.n = n;
  s.hash = hash;
  s.sum = sum;
  return s;
}

PlannedBuffer Planned(uint32_t arg, uint64_t addr) {
  PlannedBuffer b;
  b.arg = arg;
  b.addr = addr;
  b.offset = 8;
  b.bytes = 64;
  b.dtype = DType::kF32;
  b.dtype_from = DTypeSource::kName;
  return b;
}

class RecordBuilderTest : public ::testing::Test {
 protected:
  RecordBuilderTest() {
    kernel.symbol = "_Z3addPfS_S_i";
    kernel.demangled = "add(float*, float*, float*, int)";
    p.kernel = &kernel;
    p.decision.launch = 41;
    p.decision.step = 3;
    p.stream = 7;
    p.grid = {4, 2, 1};
    p.block = {128, 1, 1};
    p.buffers = {Planned(0, 0x1000), Planned(1, 0x2000), Planned(2, 0x3000)};
  }
  KernelInfo kernel;
  PendingRecord p;
};

TEST_F(RecordBuilderTest, RolesComeFromTheHashesAndElementCountsBeforeAndAfter) {
  p.has_before = true;
  p.before = {Stats(16, 0xa, 1), Stats(16, 0xb, 2), Stats(16, 0xc, 3)};
  // arg 0 unchanged; arg 1 new bytes; arg 2 the same hash over fewer elements.
  p.after = {Stats(16, 0xa, 1), Stats(16, 0xbb, 5), Stats(15, 0xc, 3)};
  const KernelRecord r = BuildKernelRecord(p);
  ASSERT_EQ(r.buffers.size(), 3u);
  EXPECT_EQ(r.buffers[0].role, Role::kIn);
  EXPECT_FALSE(r.buffers[0].pre.has_value()) << "an input's pre would only repeat its stats";
  EXPECT_EQ(r.buffers[1].role, Role::kOut);
  ASSERT_TRUE(r.buffers[1].pre.has_value());
  EXPECT_EQ(r.buffers[1].pre->hash, 0xbu);
  EXPECT_EQ(r.buffers[1].stats.hash, 0xbbu);
  EXPECT_EQ(r.buffers[2].role, Role::kOut);
  ASSERT_TRUE(r.buffers[2].pre.has_value());
  EXPECT_EQ(r.buffers[2].pre->n, 16u);
}

TEST_F(RecordBuilderTest, WithoutABeforeEveryRoleIsUnknown) {
  p.before = {Stats(16, 0xa, 1), Stats(16, 0xb, 2), Stats(16, 0xc, 3)};  // not has_before: ignored
  p.after = {Stats(16, 0xa, 1), Stats(16, 0xbb, 5), Stats(16, 0xc, 3)};
  const KernelRecord r = BuildKernelRecord(p);
  ASSERT_EQ(r.buffers.size(), 3u);
  for (const BufferRecord& b : r.buffers) {
    EXPECT_EQ(b.role, Role::kUnknown);
    EXPECT_FALSE(b.pre.has_value());
  }
  EXPECT_EQ(r.buffers[1].stats.sum, 5.0);
}

TEST_F(RecordBuilderTest, EveryFieldComesFromTheCapture) {
  p.has_before = true;
  p.before = {Stats(16, 1, 0), Stats(16, 2, 0), Stats(16, 3, 0)};
  p.after = p.before;
  const KernelRecord r = BuildKernelRecord(p);
  EXPECT_EQ(r.launch, 41u);
  EXPECT_EQ(r.step, 3);
  EXPECT_EQ(r.name, kernel.symbol);
  EXPECT_EQ(r.demangled, kernel.demangled);
  EXPECT_EQ(r.stream, 7u);
  EXPECT_EQ(r.grid, (std::array<uint32_t, 3>{4, 2, 1}));
  EXPECT_EQ(r.block, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_FALSE(r.op_level);
  ASSERT_EQ(r.buffers.size(), 3u);
  EXPECT_EQ(r.buffers[2].arg, 2u);
  EXPECT_EQ(r.buffers[2].addr, 0x3000u);
  EXPECT_EQ(r.buffers[2].offset, 8u);
  EXPECT_EQ(r.buffers[2].bytes, 64u);
  EXPECT_EQ(r.buffers[2].dtype, DType::kF32);
  EXPECT_EQ(r.buffers[2].dtype_from, DTypeSource::kName);
  EXPECT_EQ(r.buffers[2].stats.hash, 3u);
}

TEST_F(RecordBuilderTest, OutsideEveryStepAndUndemangledLeaveThoseFieldsOut) {
  p.decision.step = -1;
  kernel.demangled = kernel.symbol;
  p.after = {Stats(1, 1, 0), Stats(1, 2, 0), Stats(1, 3, 0)};
  const KernelRecord r = BuildKernelRecord(p);
  EXPECT_FALSE(r.step.has_value());
  EXPECT_TRUE(r.demangled.empty()) << "written only when it differs from the name";
}

TEST(RecordBuilderOpTest, AnOperatorsOutputsGetTheirPreAndItsInputsKeepTheirRole) {
  PendingRecord p;
  p.op = std::make_unique<KernelRecord>();
  p.op->op_level = true;
  p.op->name = "aten::add_";
  BufferRecord self, other;
  self.arg = 0;
  self.role = Role::kOut;
  self.stats = Stats(4, 0x2, 8);
  other.arg = 1;
  other.role = Role::kIn;
  other.stats = Stats(4, 0x3, 4);
  p.op->buffers = {self, other};
  // Unchanged bytes still make an output: its schema says it writes them.
  p.op_pre = {{0, Stats(4, 0x2, 8)}, {1, Stats(4, 0x9, 9)}};
  const KernelRecord r = BuildOpRecord(p);
  EXPECT_EQ(r.name, "aten::add_");
  ASSERT_EQ(r.buffers.size(), 2u);
  EXPECT_EQ(r.buffers[0].role, Role::kOut);
  ASSERT_TRUE(r.buffers[0].pre.has_value());
  EXPECT_EQ(r.buffers[0].pre->sum, 8.0);
  EXPECT_EQ(r.buffers[1].role, Role::kIn);
  EXPECT_FALSE(r.buffers[1].pre.has_value()) << "an input's pre is not written";
}

TEST_F(RecordBuilderTest, DropNotesNameTheKernelOrTheOperatorAndTheReason) {
  p.dropped = true;
  p.drop_reason = "its measurement had not completed at exit";
  NoteRecord n = DropNote(p, /*last=*/false);
  EXPECT_EQ(n.launch, 41u);
  EXPECT_EQ(n.msg, "kernel _Z3addPfS_S_i not recorded: its measurement had not completed at exit");
  n = DropNote(p, /*last=*/true);
  EXPECT_EQ(n.msg,
            "kernel _Z3addPfS_S_i not recorded: its measurement had not completed at exit"
            " (further drops are only counted in the footer)");

  PendingRecord op;
  op.decision.launch = 5;
  op.dropped = true;
  op.drop_reason = "the GPU reported an error for its measurement";
  op.op = std::make_unique<KernelRecord>();
  EXPECT_EQ(DropNote(op, false).msg, "an operator call not recorded: the GPU reported an error for its measurement");
  op.op->name = "aten::mm";
  EXPECT_EQ(DropNote(op, false).msg, "operator aten::mm not recorded: the GPU reported an error for its measurement");
}

}  // namespace
}  // namespace numtrace::shim
