// A DebugMode log cut anywhere (mid-line, mid-block, between blocks) reads
// as its complete blocks, flagged truncated - never an error, never a block
// with a value cut to fewer digits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  absl::StatusOr<Trace> full = ReadTraceBytes(log, "rank_0_activations.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ(full->kernels.size(), 3u);
  EXPECT_FALSE(full->truncated);
  for (size_t cut = first_block + 1; cut < log.size(); ++cut) {
    const std::string prefix = log.substr(0, cut);
    absl::StatusOr<Trace> t = ReadTraceBytes(prefix, "rank_0_activations.log", FindImporter("debugmode-log"));
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
  absl::StatusOr<Trace> t = ReadTraceBytes(cut, "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 2u);
  EXPECT_TRUE(t->truncated);
  // Cut at a line end inside the block: the block lacks the keys and the
  // blank line the others had.
  cut = log.substr(0, log.rfind("  Mean:"));
  t = ReadTraceBytes(cut, "x.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 2u);
  EXPECT_TRUE(t->truncated);
}

TEST(DebugModeTruncationTest, NumbersOutOfRangeHaveTheirOwnWords) {
  OpBlock b;
  b.l2 = "1e999";
  absl::StatusOr<Trace> t = ReadTraceBytes(DebugModeLogText({b, OpBlock{}}), "x.log", FindImporter("debugmode-log"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("L2 norm: number out of range"), absl::string_view::npos) << t.status();
}

}  // namespace
}  // namespace numtrace::analyzer

namespace numtrace::analyzer {
namespace {

// The reader's fast number path must give exactly what from_chars gives,
// for the tracer's "%.6e" and for repr()-style shortest doubles.
TEST(DebugModeNumbersTest, FastPathEqualsFromCharsBitForBit) {
  std::vector<std::string> texts = {"0.000000e+00", "-0.000000e+00", "1.250000e+01", "9.999999e+22",
                                    "1.000000e-22", "4.940656e-324", "1.797693e+308", "123456789012345678",
                                    "9007199254740993", "9007199254740992", "0.1", "2216.7252232166784",
                                    "31694576.51206128", "84.70580772434663", "1e23", "5e-23", "-7.5"};
  uint64_t x = 0x9e3779b97f4a7c15ull;
  char buf[64];
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    double v = std::ldexp(static_cast<double>(x >> 11) / 9007199254740992.0, static_cast<int>(x % 120) - 60);
    if (x & 1) v = -v;
    std::snprintf(buf, sizeof(buf), i % 2 ? "%.6e" : "%.17g", v);
    texts.push_back(buf);
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(x % 12), v);
    texts.push_back(buf);
  }
  std::string log;
  for (size_t i = 0; i < texts.size(); ++i) {
    log += "[m/op_" + std::to_string(i) + "_add]\n  Shape: torch.Size([1]), Dtype: torch.float32\n"
           "  L2 norm:  1\n  Min:      " + texts[i] + "\n  Max:      1\n  Mean:     1\n"
           "  Output hash: 1\n  Location: x.py:1\n\n";
  }
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "n.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels.size(), texts.size());
  size_t wrong = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const double want = std::strtod(texts[i].c_str(), nullptr);
    const Buffer& b = t->BuffersOf(t->kernels[i])[0];
    const double got = b.stats.has_range ? b.stats.min : std::nan("");
    if (std::isfinite(want) && std::memcmp(&want, &got, sizeof(double)) != 0) {
      if (++wrong < 5) ADD_FAILURE() << texts[i] << ": " << got << " != " << want;
    }
  }
  EXPECT_EQ(wrong, 0u);
}

}  // namespace
}  // namespace numtrace::analyzer
