// File: test/analyzer/cli/debugmode_diff_test.cc
//
// torchtitan DebugMode activation logs through the whole numtrace-diff
// command: run A logged under FSDP (keys prefixed by the root class,
// `FSDPLlama3Model.layers.0...`), run B without it, and B has one extra op
// in layers.1 that shifts that module's op counters (`layers.1/op_0_add` in A
// is `layers.1/op_1_add` in B). Everything must pair by name without an
// override file, the extra op must stay unmatched, and the one planted
// divergence must be named as the first.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/diff_command.h"
#include "test/analyzer/read/debugmode_log_text.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::DebugModeLogText;
using testing::OpBlock;

// A distinct op: stats and hash derived from `k`, so no two ops of one run
// look alike by content.
OpBlock Op(std::string key, int k) {
  OpBlock b;
  b.key = std::move(key);
  b.l2 = std::to_string(10 + k) + ".500000e+00";
  b.max = std::to_string(1 + k) + ".250000e+00";
  b.output_hash = std::to_string(100 + 7 * k) + ".123456789e+00";
  return b;
}

class DebugModeDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = numtrace::testing::FreshTestDir("debugmode_diff");
    fs::create_directories(dir_ / "a");
    fs::create_directories(dir_ / "b");
    const std::string p = "FSDPLlama3Model.";
    std::vector<OpBlock> a = {
        Op(p + "tok_embeddings/op_0_embedding", 0),
        Op(p + "layers.0.attention.wq/op_0_mm", 1),
        Op(p + "layers.0/op_0_add", 2),
        Op(p + "layers.1/op_0_add", 3),
        Op(p + "layers.1.feed_forward.w1/op_0_mm", 4),
        Op(p + "layers.1/op_1_add", 5),
        Op(p + "norm/op_0_rms_norm", 6),
    };
    OpBlock diverged = Op("layers.1.feed_forward.w1/op_0_mm", 4);
    // Twice the norm and a new maximum: beyond any dtype's rounding noise.
    diverged.l2 = "2.900000e+01";
    diverged.max = "9.500000e+00";
    diverged.output_hash = "2.580000000e+02";
    std::vector<OpBlock> b = {
        Op("tok_embeddings/op_0_embedding", 0),
        Op("layers.0.attention.wq/op_0_mm", 1),
        Op("layers.0/op_0_add", 2),
        Op("layers.1/op_0_mul", 9),  // the extra op: shifts the add counters below
        Op("layers.1/op_1_add", 3),
        diverged,
        Op("layers.1/op_2_add", 5),
        Op("norm/op_0_rms_norm", 6),
    };
    numtrace::testing::WriteFileText(dir_ / "a" / "rank_0_activations.log", DebugModeLogText(a));
    numtrace::testing::WriteFileText(dir_ / "b" / "rank_0_activations.log", DebugModeLogText(b));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(DebugModeDiffTest, CounterShiftsAndRootClassPrefixesPairWithoutOverrides) {
  const std::string a = (dir_ / "a" / "rank_0_activations.log").string();
  const std::string b = (dir_ / "b" / "rank_0_activations.log").string();
  const std::string json = (dir_ / "s.json").string();
  const char* argv[] = {"numtrace-diff", a.c_str(), b.c_str(), "--json", json.c_str()};
  std::ostringstream out, err;
  ASSERT_EQ(DiffMain(5, argv, out, err, false), kExitDiverged) << err.str() << out.str();

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(json).get(doc), simdjson::SUCCESS);
  simdjson::dom::element counts = doc["counts"];
  EXPECT_EQ(int64_t(counts["pairs"]), 7);
  EXPECT_EQ(int64_t(counts["only_a"]), 0);
  EXPECT_EQ(int64_t(counts["only_b"]), 1) << "the extra mul";
  EXPECT_EQ(int64_t(counts["bitwise_equal"]), 6);
  EXPECT_EQ(int64_t(counts["diverged"]), 1);
  simdjson::dom::element methods = doc["match_methods"];
  EXPECT_EQ(int64_t(methods["override"]), 0);
  EXPECT_EQ(int64_t(methods["value"]), 0) << "paired by name, not by content";
  // Names equal once counters and the root class are normalised away.
  EXPECT_EQ(int64_t(methods["exact"]) + int64_t(methods["fuzzy"]), 7);

  simdjson::dom::element first = doc["first_divergence"];
  EXPECT_EQ(int64_t(first["a_seq"]), 4);
  EXPECT_EQ(int64_t(first["b_seq"]), 5);
  EXPECT_EQ(std::string_view(first["a_name"]), "FSDPLlama3Model.layers.1.feed_forward.w1/op_0_mm");
  EXPECT_EQ(std::string_view(first["b_name"]), "layers.1.feed_forward.w1/op_0_mm");
  EXPECT_EQ(std::string_view(first["kind"]), "values");
}

TEST_F(DebugModeDiffTest, TheBinaryGivesTheSameVerdict) {
  const std::string bin = std::string(NUMTRACE_BINARY_DIR) + "/bin/numtrace-diff";
  if (!fs::exists(bin)) GTEST_SKIP() << bin << " not built";
  const std::string cmd = bin + " " + (dir_ / "a").string() + " " + (dir_ / "b").string() +
                          " --quiet 2>" + (dir_ / "err.txt").string();
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitDiverged) << "directories of DebugMode logs, paired by rank";
}

// The bf16 case: a chain of ops, each reading the previous op's
// output (Input hashes = that op's Output hash). In B op 5 drifts by 1%
// (a wrong scale) and every later op inherits it: the first divergence must
// be op 5 itself, not a later op, and it is the origin of all that follow.
TEST(DebugModeOrigins, OnePercentBf16DriftIsFirstAtItsOpAndOriginOfTheRest) {
  const fs::path dir = numtrace::testing::FreshTestDir("debugmode_origins");
  auto chain = [](double drift_from_5) {
    std::vector<OpBlock> ops;
    std::string prev_hash;
    for (int i = 0; i < 10; ++i) {
      const double f = i >= 5 ? drift_from_5 : 1.0;
      char buf[64];
      OpBlock b;
      b.key = "layers.0.mlp/op_" + std::to_string(i) + "_mm";
      b.shape = "torch.Size([64, 64])";
      b.dtype = "torch.bfloat16";
      std::snprintf(buf, sizeof(buf), "%.6e", (100.0 + i) * f);
      b.l2 = buf;
      std::snprintf(buf, sizeof(buf), "%.6e", -(3.0 + i) * f);
      b.min = buf;
      std::snprintf(buf, sizeof(buf), "%.6e", (4.0 + i) * f);
      b.max = buf;
      std::snprintf(buf, sizeof(buf), "%.6e", (0.25 + 0.01 * i) * f);
      b.mean = buf;
      std::snprintf(buf, sizeof(buf), "%.12e", (5000.0 + 17 * i) * f);
      b.output_hash = buf;
      b.input_hashes = prev_hash.empty() ? "1.000000e+00" : prev_hash;
      prev_hash = b.output_hash;
      ops.push_back(b);
    }
    return ops;
  };
  numtrace::testing::WriteFileText(dir / "a.log", DebugModeLogText(chain(1.0)));
  numtrace::testing::WriteFileText(dir / "b.log", DebugModeLogText(chain(1.01)));
  const std::string a = (dir / "a.log").string(), b = (dir / "b.log").string(), json = (dir / "s.json").string();
  const char* argv[] = {"numtrace-diff", a.c_str(), b.c_str(), "--json", json.c_str()};
  std::ostringstream out, err;
  ASSERT_EQ(DiffMain(5, argv, out, err, false), kExitDiverged) << err.str() << out.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(json).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["counts"]["diverged"]), 5);
  EXPECT_EQ(int64_t(doc["first_divergence"]["a_seq"]), 5);
  EXPECT_EQ(std::string_view(doc["first_divergence"]["cause"]), "origin");
  EXPECT_GT(double(doc["first_divergence"]["score"]), 1.0);
  EXPECT_EQ(int64_t(doc["origins"]["count"]), 1);
  EXPECT_EQ(int64_t(doc["origins"]["first"]["a_seq"]), 5);
  EXPECT_EQ(int64_t(doc["origins"]["first"]["descendants"]), 4);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numtrace::analyzer
