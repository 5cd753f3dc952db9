#include "analyzer/read/debugmode_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "test/analyzer/read/debugmode_log_text.h"

namespace numtrace::analyzer {
namespace {

// A hash-only block (an in-place op, a small tensor: no Shape): no output
// with a printed statistic beyond its hash.
bool HashOnly(const Trace& t, const Kernel& k) {
  for (uint32_t i = k.first_buffer; i < k.first_buffer + k.buffer_count; ++i) {
    if (t.buffers[i].IsOutput() && (t.printed[i].has & ~PrintedStats::kL1) != 0) return false;
  }
  return true;
}

using ::testing::StartsWith;
using testing::DebugModeLogText;
using testing::OpBlock;

TEST(DebugModeReaderTest, SingleOutputBlock) {
  OpBlock b;
  b.input_hashes = "5.5e+02, None, 7.0e+01";
  absl::StatusOr<Trace> t =
      ReadTraceBytes(DebugModeLogText({b}), "dumps/rank_3_activations.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, "DebugMode log");
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->label, "rank_3_activations");
  EXPECT_FALSE(t->truncated);
  ASSERT_EQ(t->kernels.size(), 1u);
  const Kernel& k = t->kernels[0];
  EXPECT_EQ(k.seq, 0u);
  EXPECT_EQ(t->Name(k), "layers.0.attention.wq/op_0_mm");
  EXPECT_EQ(t->Demangled(k), "mm");
  auto buffers = t->BuffersOf(k);
  ASSERT_EQ(buffers.size(), 3u);  // one output, two inputs ("None" skipped)
  const Buffer& out = buffers[0];
  EXPECT_EQ(out.role, Role::kOut);
  EXPECT_EQ(out.arg, 0u);
  EXPECT_EQ(out.dtype, DType::kBF16);
  EXPECT_EQ(out.stats.n, 32u);
  EXPECT_EQ(out.bytes, 64u);
  EXPECT_TRUE(out.stats.has_range);
  EXPECT_EQ(out.stats.min, -3.0);
  EXPECT_EQ(out.stats.max, 4.5);
  EXPECT_EQ(out.stats.l2, 12.5);
  EXPECT_EQ(out.stats.sum, 0.25 * 32);
  EXPECT_EQ(out.stats.l1, 1.234567891234e+02);
  EXPECT_EQ(out.stats.hash, std::bit_cast<uint64_t>(1.234567891234e+02));
  EXPECT_EQ(out.stats.nan + out.stats.inf + out.stats.ninf, 0u);
  EXPECT_EQ(buffers[1].role, Role::kIn);
  EXPECT_EQ(buffers[1].arg, 0u);
  EXPECT_EQ(buffers[1].stats.l1, 550.0);
  EXPECT_EQ(buffers[1].stats.hash, std::bit_cast<uint64_t>(550.0));
  EXPECT_EQ(buffers[2].arg, 2u);
  EXPECT_EQ(buffers[2].stats.l1, 70.0);
  EXPECT_EQ(t->Src(k), "common/attention.py:534");
}

// The tracer's Location is the provenance's src (reports print "at FILE:LINE"),
// each block's own: a block without one has none.
TEST(DebugModeReaderTest, LocationIsTheSourceOfItsBlockOnly) {
  const std::string log =
      "[layers.0/op_0_mm]\n  Output hash: 1.0e+00\n  Location: model.py:12\n\n"
      "[layers.0/op_1_add]\n  Output hash: 2.0e+00\n  Input hashes: 1.0e+00\n\n"
      "[<none>/op_0_add_]\n  Output hash: 3.0e+00\n  Location:   optim/adam.py:415  \n\n";
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->Src(t->kernels[0]), "model.py:12");
  EXPECT_EQ(t->Src(t->kernels[1]), std::nullopt);
  EXPECT_EQ(t->Src(t->kernels[2]), "optim/adam.py:415");
}

TEST(DebugModeReaderTest, TupleOutputsAndPrefixedKeys) {
  OpBlock b;
  b.key = "FSDPLlama3Model.layers.1.attention/op_12__scaled_dot_product_flash_attention";
  b.shape = "(torch.Size([2, 16, 128]), torch.Size([2, 16]))";
  b.dtype = "torch.bfloat16";
  b.output_hash = "1.5e+03, 2.5e+01";
  b.min = "-1.0e+00, -2.0e+00";
  b.max = "1.0e+00, 2.0e+00";
  b.phase = "backward";
  absl::StatusOr<Trace> t = ReadTraceBytes(DebugModeLogText({OpBlock{}, b}), "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels.size(), 2u);
  const Kernel& k = t->kernels[1];
  EXPECT_EQ(k.seq, 1u);
  EXPECT_EQ(t->Demangled(k), "_scaled_dot_product_flash_attention");
  auto buffers = t->BuffersOf(k);
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].stats.n, 2u * 16 * 128);
  EXPECT_EQ(buffers[1].stats.n, 2u * 16);
  EXPECT_EQ(buffers[1].arg, 1u);
  EXPECT_EQ(buffers[1].dtype, DType::kBF16);  // one dtype given: applies to all
  EXPECT_EQ(buffers[0].stats.l1, 1500.0);
  EXPECT_EQ(buffers[1].stats.l1, 25.0);
  EXPECT_EQ(buffers[1].stats.min, -2.0);
  EXPECT_EQ(buffers[1].stats.max, 2.0);
  EXPECT_NE(buffers[0].stats.hash, buffers[1].stats.hash);
}

TEST(DebugModeReaderTest, SeparateShapeAndDtypeLinesAndUnknownDtype) {
  std::string log =
      "[norm/op_0_add]\n"
      "  Shape: torch.Size([])\n"
      "  Dtype: torch.complex64\n"
      "  L1 norm:  2.000000e+00\n"
      "  Future stat: 42\n"
      "\n";  // a lone block ends with its blank line (else it reads as cut short)
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  const Buffer& out = t->buffers[0];
  EXPECT_EQ(out.dtype, DType::kRaw);
  EXPECT_EQ(out.stats.n, 1u);  // a scalar
  EXPECT_EQ(out.stats.l1, 2.0);
  EXPECT_EQ(out.stats.hash, std::bit_cast<uint64_t>(2.0));
  EXPECT_FALSE(out.stats.has_range);
}

TEST(DebugModeReaderTest, NonFiniteValuesAreCounted) {
  OpBlock nan_block;
  nan_block.key = "a/op_0_mm";
  nan_block.min = "nan";
  nan_block.max = "nan";
  nan_block.output_hash = "nan";
  OpBlock inf_block;
  inf_block.key = "a/op_1_mm";
  inf_block.min = "-inf";
  inf_block.max = "inf";
  inf_block.l2 = "inf";
  absl::StatusOr<Trace> t = ReadTraceBytes(DebugModeLogText({nan_block, inf_block}), "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  const BufferStats& a = t->buffers[0].stats;
  EXPECT_EQ(a.nan, 1u);
  EXPECT_FALSE(a.has_range);
  EXPECT_TRUE(std::isnan(a.l1));
  const BufferStats& b = t->buffers[1].stats;
  EXPECT_EQ(b.nan, 0u);
  EXPECT_EQ(b.inf, 1u);
  EXPECT_EQ(b.ninf, 1u);
  EXPECT_FALSE(b.has_range);
  EXPECT_LE(a.nan + a.inf + a.ninf, a.n);
}

// Hash-only blocks (no Shape: the tracer logs only hashes of the optimizer's
// in-place ops) hold exactly the outputs they have hashes for: one for an
// op that returned its tensor, none for one that returned nothing (its
// input hashes are then all there is to compare).
TEST(DebugModeReaderTest, HashOnlyBlocksHaveTheOutputsTheyHaveHashesFor) {
  std::string log = DebugModeLogText({OpBlock{}});
  log += "[<none>/op_1_add_]\n"
         "  Output hash: 1.000000e+00\n"
         "  Input hashes: 0.000000e+00\n"
         "  Location: optim/adam.py:415\n"
         "\n"
         "[<none>/op_2__foreach_add_]\n"
         "  Input hashes: 3.000000e+00, 4.000000e+00\n"
         "  Input producers: ;\n"
         "  Location: optim/adam.py:877\n"
         "\n";
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated);
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_FALSE(HashOnly(*t, t->kernels[0]));
  EXPECT_TRUE(HashOnly(*t, t->kernels[1]));
  EXPECT_TRUE(HashOnly(*t, t->kernels[2]));
  auto one = t->BuffersOf(t->kernels[1]);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].role, Role::kOut);
  EXPECT_EQ(one[0].stats.l1, 1.0);
  EXPECT_EQ(t->printed[&one[0] - t->buffers.data()].has, PrintedStats::kL1);  // the hash, no stats
  EXPECT_EQ(one[1].role, Role::kIn);
  auto none = t->BuffersOf(t->kernels[2]);
  ASSERT_EQ(none.size(), 2u);
  EXPECT_EQ(none[0].role, Role::kIn);
  EXPECT_EQ(none[1].role, Role::kIn);
  EXPECT_EQ(none[1].stats.l1, 4.0);
}

// A hash-only block as the tracer writes it for an in-place op of a small
// tensor.
std::string HashOnlyBlock(const std::string& key, const std::string& out, const std::string& in) {
  return "[" + key + "]\n  Output hash: " + out + "\n  Input hashes: " + in + "\n  Location: optim/adam.py:1\n\n";
}

TEST(DebugModeReaderTest, InPlaceOpsOutsideModulesChainByTheirHashes) {
  OpBlock module_op;  // in a module: no chain
  OpBlock backward;  // compiled backward: no module, no chain
  backward.key = "<none>/op_0_mm";
  backward.phase = "backward";
  backward.output_hash = "2.500000e+00";
  OpBlock sqrt;  // not in place, reads op_3's output
  sqrt.key = "<none>/op_5_sqrt";
  sqrt.output_hash = "9.000000e-01";
  sqrt.input_hashes = "3.000000e-01";
  OpBlock unlinked;  // not in place, reads nothing of a chain
  unlinked.key = "<none>/op_8_add";
  unlinked.input_hashes = "7.000000e+00";
  std::string log = DebugModeLogText({module_op, backward});
  log += HashOnlyBlock("<none>/op_1_add_", "1.000000e+00", "0.000000e+00") +  // a zero links nothing
         HashOnlyBlock("<none>/op_2_mul_", "2.500000e+00", "2.600000e+00") +  // backward's 2.5 is no chain's
         HashOnlyBlock("<none>/op_3_lerp_", "3.000000e-01", "0.000000e+00, 3.000000e+00") +
         HashOnlyBlock("<none>/op_4_mul_", "0.000000e+00", "0.000000e+00");
  auto blocks_of = [](const std::string& text) { return text.substr(text.find("\n[") + 1); };  // no preamble
  log += blocks_of(DebugModeLogText({sqrt}));
  log += HashOnlyBlock("<none>/op_6_addcdiv_", "2.400000e+00", "2.500000e+00, 3.000000e-01, 9.000000e-01") +
         HashOnlyBlock("<none>/op_7_add_", "1.000000e+00", "0.000000e+00");
  log += blocks_of(DebugModeLogText({unlinked}));
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels.size(), 10u);
  auto at = [](uint64_t chain, uint64_t place) { return (chain + 1) << 32 | place; };
  // op_6 joins op_2's chain by its first input, though its other inputs are
  // op_3's and op_5's outputs; op_5 joins op_3's by its only input.
  EXPECT_THAT(t->update_chain, ::testing::ElementsAre(0, 0, at(0, 0), at(1, 0), at(2, 0), at(3, 0), at(2, 1),
                                                      at(1, 1), at(4, 0), 0));
  absl::StatusOr<Trace> none = ReadTraceBytes(DebugModeLogText({module_op, backward}), "x.log",
                                              FindImporter("debugmode-log"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->update_chain.empty());
}

TEST(DebugModeReaderTest, DeclaredTotalAboveBlocksMeansTruncated) {
  absl::StatusOr<Trace> t = ReadTraceBytes(DebugModeLogText({OpBlock{}}, 5), "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->truncated);
}

TEST(DebugModeReaderTest, MalformedLinesNameTheLine) {
  OpBlock bad;
  bad.min = "minus three";
  std::string log = DebugModeLogText({OpBlock{}, bad});
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "r/rank_0_activations.log", FindImporter("debugmode-log"));
  ASSERT_FALSE(t.ok());
  // Preamble 4 lines, first block 10 lines (incl. blank), then [key], Shape, L2, Min.
  EXPECT_EQ(t.status().message(),
            "r/rank_0_activations.log:17: Min: not a number: \"minus three\"");

  EXPECT_EQ(ReadTraceBytes("  Shape: torch.Size([1])\n", "x.log", FindImporter("debugmode-log")).status().message(),
            "x.log:1: a \"Key: value\" line outside any [block]");
  EXPECT_EQ(ReadTraceBytes("[a/op_0_mm]\n  Shape torch.Size([1])\n", "x.log", FindImporter("debugmode-log")).status().message(),
            "x.log:2: expected \"Key: value\"");
  EXPECT_THAT(std::string(ReadTraceBytes("[a/op_0_mm]\n  Shape: big\n", "x.log", FindImporter("debugmode-log")).status().message()),
              StartsWith("x.log:2: Shape: no [dims]"));
  EXPECT_EQ(ReadTraceBytes("[a/op_0_mm]\nstray text\n", "x.log", FindImporter("debugmode-log")).status().message(),
            "x.log:2: expected a \"[module/op_N_name]\" block header or an indented \"Key: value\" line");
  EXPECT_EQ(ReadTraceBytes("", "x.log", FindImporter("debugmode-log")).status().message(), "x.log: empty trace");
  EXPECT_THAT(std::string(ReadTraceBytes("Total captured activations: 0\n", "x.log", FindImporter("debugmode-log")).status().message()),
              StartsWith("x.log: no [module/op_N_name] blocks"));
}

TEST(DebugModeReaderTest, OpNameOfKeys) {
  EXPECT_EQ(DebugModeOpName("layers.0.attention.wq/op_3_mm"), "mm");
  EXPECT_EQ(DebugModeOpName("<none>/op_10_add_"), "add_");
  EXPECT_EQ(DebugModeOpName("weird_key"), "weird_key");
  EXPECT_EQ(DebugModeOpName("a/op_x_mm"), "a/op_x_mm");
}

}  // namespace
}  // namespace numtrace::analyzer
