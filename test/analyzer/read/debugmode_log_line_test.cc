// The DebugMode log's line tokenizer alone, on lines of the real torchtitan
// logs in test/data/debugmode-real (the block parser is tested through the
// reader: debugmode_reader_test.cc, debugmode_truncation_test.cc).
#include "analyzer/read/debugmode_log_line.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

using L = DebugModeLogLine;

TEST(DebugModeLogLineTest, RealLinesHaveTheirKindAndFields) {
  // Lines as they are in debugmode-real/identical/rank_0_activations.log.
  L l = TokenizeDebugModeLine("Total captured activations: 296");
  EXPECT_EQ(l.kind, L::kTotal);
  EXPECT_EQ(l.total, 296u);
  EXPECT_EQ(TokenizeDebugModeLine("Excluded ops dispatched: _unsafe_view, clone, detach, lift_fresh").kind, L::kExcluded);
  EXPECT_EQ(TokenizeDebugModeLine(std::string(80, '=')).kind, L::kRule);
  EXPECT_EQ(TokenizeDebugModeLine("").kind, L::kBlank);

  l = TokenizeDebugModeLine("[layers.0.norm1/op_0_native_layer_norm]");
  EXPECT_EQ(l.kind, L::kHeader);
  EXPECT_EQ(l.key, "layers.0.norm1/op_0_native_layer_norm");
  l = TokenizeDebugModeLine("[<none>/op_3_add_]");
  EXPECT_EQ(l.kind, L::kHeader);
  EXPECT_EQ(l.key, "<none>/op_3_add_");

  l = TokenizeDebugModeLine("  Shape: torch.Size([2, 32, 32]), Dtype: torch.bfloat16");
  EXPECT_EQ(l.kind, L::kStat);
  EXPECT_EQ(l.stat, kStatShape);
  EXPECT_EQ(l.key, "Shape");
  EXPECT_EQ(l.value, "torch.Size([2, 32, 32]), Dtype: torch.bfloat16");  // the Dtype part is the parser's

  struct Case {
    const char* line;
    DebugModeStat stat;
    const char* key;
    const char* value;
  };
  const Case cases[] = {
      {"  L2 norm: 4.526232e+01", kStatL2, "L2 norm", "4.526232e+01"},
      {"  Min: -2.687500e+00", kStatMin, "Min", "-2.687500e+00"},
      {"  Max: 3.015625e+00", kStatMax, "Max", "3.015625e+00"},
      {"  Mean: -7.893518e-05", kStatMean, "Mean", "-7.893518e-05"},
      {"  Output hash: 1.638804e+03, 8.883759e+00, 6.808984e+01", kStatOutputHash, "Output hash",
       "1.638804e+03, 8.883759e+00, 6.808984e+01"},
      {"  Input hashes: 1.602376e+03, 3.200000e+01, 0.000000e+00", kStatInputHashes, "Input hashes",
       "1.602376e+03, 3.200000e+01, 0.000000e+00"},
      {"  Input producers: tok_embeddings/op_0_embedding;;", kStatInputProducers, "Input producers",
       "tok_embeddings/op_0_embedding;;"},
      {"  Input producers: ;", kStatInputProducers, "Input producers", ";"},
      {"  Location: debugmode-real/make_corpus.py:89", kStatLocation, "Location", "debugmode-real/make_corpus.py:89"},
      {"  Location: optim/adam.py:415", kStatLocation, "Location", "optim/adam.py:415"},
      {"  Phase: backward", kStatPhase, "Phase", "backward"},
      // Forms the reader also takes: a Dtype line of its own, an L1 norm, a
      // key of a later tracer, an in-place op's empty hash, Windows line ends.
      {"  Dtype: torch.float32", kStatDtype, "Dtype", "torch.float32"},
      {"\tL1 norm:\t7.5e+00 ", kStatL1, "L1 norm", "7.5e+00"},
      {"  Device: cuda:0", kStatOther, "Device", "cuda:0"},
      {"  Output hash: ", kStatOutputHash, "Output hash", ""},
      {"  Min: -1.0e+00\r", kStatMin, "Min", "-1.0e+00"},
  };
  for (const Case& c : cases) {
    l = TokenizeDebugModeLine(c.line);
    EXPECT_EQ(l.kind, L::kStat) << c.line;
    EXPECT_EQ(l.stat, c.stat) << c.line;
    EXPECT_EQ(l.key, c.key) << c.line;
    EXPECT_EQ(l.value, c.value) << c.line;
  }
}

TEST(DebugModeLogLineTest, LinesTheParserRejectsAreToldApart) {
  EXPECT_EQ(TokenizeDebugModeLine("[layers.0/op_0_mm").kind, L::kBadHeader);
  EXPECT_EQ(TokenizeDebugModeLine("[]").kind, L::kBadHeader);
  EXPECT_EQ(TokenizeDebugModeLine("[a]\r").kind, L::kHeader);
  EXPECT_EQ(TokenizeDebugModeLine("  Shape torch.Size([1])").kind, L::kIndentedText);
  EXPECT_EQ(TokenizeDebugModeLine("stray text").kind, L::kText);
  // Indented, a header or a preamble line is a "Key: value" line (of a key
  // this reader does not know): indentation decides.
  L l = TokenizeDebugModeLine("  Total captured activations: 3");
  EXPECT_EQ(l.kind, L::kStat);
  EXPECT_EQ(l.stat, kStatOther);
  EXPECT_EQ(TokenizeDebugModeLine("  [a]").kind, L::kIndentedText);
  // A total that is not a number is still the preamble, without a count.
  l = TokenizeDebugModeLine("Total captured activations: many");
  EXPECT_EQ(l.kind, L::kTotal);
  EXPECT_FALSE(l.total.has_value());
  EXPECT_EQ(TokenizeDebugModeLine(" \t \r").kind, L::kBlank);
}

// Every line of every real log is one the tracer writes: a known kind, a
// known key; as many headers as the preamble's total, one Location each.
TEST(DebugModeLogLineTest, EveryLineOfTheRealLogsIsKnown) {
  for (const char* run : {"identical", "bf16", "compile", "checkpoint", "fused_adamw", "bias_compile"}) {
    SCOPED_TRACE(run);
    std::ifstream in(std::string(NUMTRACE_TEST_DATA_DIR) + "/debugmode-real/" + run + "/rank_0_activations.log");
    ASSERT_TRUE(in.good());
    std::map<L::Kind, uint64_t> kinds;
    std::map<DebugModeStat, uint64_t> stats;
    uint64_t total = 0;
    std::string line;
    while (std::getline(in, line)) {
      const L l = TokenizeDebugModeLine(line);
      ++kinds[l.kind];
      if (l.kind == L::kStat) {
        ++stats[l.stat];
        EXPECT_NE(l.stat, kStatOther) << line;
        EXPECT_FALSE(l.value.empty()) << line;
      }
      if (l.kind == L::kTotal) total = l.total.value_or(0);
    }
    EXPECT_EQ(kinds[L::kTotal], 1u);
    EXPECT_EQ(kinds[L::kExcluded], 1u);
    EXPECT_EQ(kinds[L::kRule], 1u);
    EXPECT_EQ(kinds[L::kText] + kinds[L::kBadHeader] + kinds[L::kIndentedText], 0u);
    EXPECT_GT(total, 0u);
    EXPECT_EQ(kinds[L::kHeader], total);
    EXPECT_EQ(stats[kStatLocation], total);
    // A block after every header, each followed by one blank line (and one
    // after the preamble's rule).
    EXPECT_EQ(kinds[L::kBlank], total + 1);
    EXPECT_GT(stats[kStatPhase], 0u) << "backward ops are logged";
    EXPECT_EQ(stats[kStatShape], stats[kStatMin]);
  }
}

}  // namespace
}  // namespace numtrace::analyzer
