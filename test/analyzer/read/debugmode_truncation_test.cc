// A DebugMode log cut anywhere (mid-line, mid-block, between blocks) reads
// as its complete blocks, flagged truncated - never an error, never a block
// with a value cut to fewer digits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/read/debugmode_reader.h"
#include "analyzer/read/input.h"
#include "test/analyzer/read/debugmode_log_text.h"

namespace numtrace::analyzer {
namespace {

using testing::DebugModeLogText;
using testing::OpBlock;

std::vector<OpBlock> ThreeBlocks() {
  OpBlock a, b, c;
  a.key = "layers.0.attention.wq/op_0_mm";
  a.input_hashes = "1.5e+01, 2.25e+00";
  b.key = "layers.0.attention/op_1_add";
  b.l2 = "2.718281e+00";
  b.input_hashes = "3.5e+01, None";
  c.key = "layers.0.attention/op_2_mul";
  c.min = "-1.234567e+00";
  c.input_hashes = "7.5e+00";
  c.phase = "backward";
  return {a, b, c};
}

void ExpectSameKernel(const Trace& got, size_t i, const Trace& full) {
  ASSERT_LT(i, full.kernels.size());
  EXPECT_EQ(got.Name(got.kernels[i]), full.Name(full.kernels[i]));
  auto x = got.BuffersOf(got.kernels[i]);
  auto y = full.BuffersOf(full.kernels[i]);
  ASSERT_EQ(x.size(), y.size()) << "kernel " << i;
  for (size_t j = 0; j < x.size(); ++j) {
    EXPECT_EQ(x[j].stats.hash, y[j].stats.hash);
    EXPECT_EQ(x[j].stats.l2, y[j].stats.l2);
    EXPECT_EQ(x[j].stats.min, y[j].stats.min);
    EXPECT_EQ(x[j].stats.max, y[j].stats.max);
  }
}

// Every byte offset after the preamble.
void CutEverywhere(const std::string& log, size_t first_block, bool has_total) {
  absl::StatusOr<Trace> full = ReadDebugModeBuffer(log, "rank_0_activations.log");
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ(full->kernels.size(), 3u);
  EXPECT_FALSE(full->truncated);
  for (size_t cut = first_block + 1; cut < log.size(); ++cut) {
    const std::string prefix = log.substr(0, cut);
    absl::StatusOr<Trace> t = ReadDebugModeBuffer(prefix, "rank_0_activations.log");
    ASSERT_TRUE(t.ok()) << "cut at " << cut << ": " << t.status();
    // Every block whose text is whole (with its blank line) is kept.
    size_t whole = 0;
    for (size_t at = log.find("\n\n[", first_block); at != std::string::npos && at + 2 <= cut;
         at = log.find("\n\n[", at + 1)) {
      ++whole;
    }
    // A lone first block cut just before its blank line cannot be told from
    // a whole one (nothing to learn the style from): either answer is right.
    const bool lone_before_blank = whole == 0 && log.compare(cut, 2, "\n[") == 0;
    if (lone_before_blank) {
      EXPECT_LE(t->kernels.size(), 1u) << "cut at " << cut;
    } else {
      EXPECT_EQ(t->kernels.size(), whole) << "cut at " << cut << " [" << prefix.substr(prefix.size() > 40 ? prefix.size() - 40 : 0) << "]";
    }
    // Without a preamble total a cut exactly between blocks cannot be told.
    const bool between_blocks = log.compare(cut, 1, "[") == 0 || lone_before_blank;
    EXPECT_TRUE(t->truncated || (!has_total && between_blocks)) << "cut at " << cut;
    for (size_t i = 0; i < t->kernels.size(); ++i) ExpectSameKernel(*t, i, *full);
  }
}

TEST(DebugModeTruncationTest, CutAnywhereWithPreambleIsTruncatedToCompleteBlocks) {
  const std::string log = DebugModeLogText(ThreeBlocks());
  CutEverywhere(log, log.find("\n[") + 1, true);
}

TEST(DebugModeTruncationTest, CutAnywhereWithoutPreambleToo) {
  std::string log = DebugModeLogText(ThreeBlocks());
  log = log.substr(log.find("\n[") + 1);
  CutEverywhere(log, 0, false);
}

TEST(DebugModeTruncationTest, CutMidBlockInTheLastBlockIsNotADivergence) {
  // The old reader turned "Max: 4.5" cut to "Max: 4." into a changed value
  // and reported a divergence at the cut op.
  std::string log = DebugModeLogText(ThreeBlocks());
  std::string cut = log.substr(0, log.rfind("Max:      4.5") + 12);
  absl::StatusOr<Trace> t = ReadDebugModeBuffer(cut, "x.log");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 2u);
  EXPECT_TRUE(t->truncated);
  // Cut at a line end inside the block: the block lacks the keys and the
  // blank line the others had.
  cut = log.substr(0, log.rfind("  Mean:"));
  t = ReadDebugModeBuffer(cut, "x.log");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 2u);
  EXPECT_TRUE(t->truncated);
}

TEST(DebugModeTruncationTest, NumbersOutOfRangeHaveTheirOwnWords) {
  OpBlock b;
  b.l2 = "1e999";
  absl::StatusOr<Trace> t = ReadDebugModeBuffer(DebugModeLogText({b, OpBlock{}}), "x.log");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("L2 norm: number out of range"), absl::string_view::npos) << t.status();
}

}  // namespace
}  // namespace numtrace::analyzer
