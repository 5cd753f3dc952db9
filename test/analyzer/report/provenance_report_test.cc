// Provenance in the analyzer's outputs: DebugMode logs from torchtitan's real
// tracer with a change planted in layers.1.feed_forward.w1 (test/data/
// debugmode-provenance) report that module, an addmm, phase forward; a trace
// without provenance gets no provenance fields; labels and the roll-up.
#include <gtest/gtest.h>

#include <string>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/provenance.h"
#include "analyzer/read/debugmode_reader.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/rank_diff.h"
#include "analyzer/report/terminal_summary.h"
#include "simdjson.h"

namespace numtrace::analyzer {
namespace {

constexpr const char* kDir = NUMTRACE_SOURCE_DIR "/test/data/debugmode-provenance/";

TEST(ProvenanceLabelTest, ScopeOpPhase) {
  EXPECT_EQ(ProvenanceLabel(std::string_view("layers.1.fc"), std::string_view("aten::addmm"), Phase::kForward),
            "layers.1.fc (aten::addmm, forward)");
  EXPECT_EQ(ProvenanceLabel(std::string_view(""), std::nullopt, Phase::kOptimizer), "(root) (optimizer)");
  EXPECT_EQ(ProvenanceLabel(std::nullopt, std::string_view("aten::mm"), Phase::kNone), "(aten::mm)");
  EXPECT_EQ(ProvenanceLabel(std::nullopt, std::nullopt, Phase::kNone), "");
}

TEST(DebugModeProvenanceTest, KeyGivesScopeAndOp) {
  DebugModeProvenance p = DebugModeProvenanceOf("FSDPLlama3Model.layers.0.attention.wq/op_0_mm");
  EXPECT_EQ(p.scope, "layers.0.attention.wq");
  EXPECT_EQ(p.op, "aten::mm");
  p = DebugModeProvenanceOf("layers.1.feed_forward.w1/op_3_addmm");
  EXPECT_EQ(p.scope, "layers.1.feed_forward.w1");
  EXPECT_EQ(p.op, "aten::addmm");
  p = DebugModeProvenanceOf("<none>/op_0__log_softmax");
  EXPECT_FALSE(p.scope.has_value());
  EXPECT_EQ(p.op, "aten::_log_softmax");
  p = DebugModeProvenanceOf("Transformer/op_0_add");  // the root module itself
  EXPECT_EQ(p.scope, "");
  p = DebugModeProvenanceOf("no op part");
  EXPECT_FALSE(p.scope.has_value());
  EXPECT_EQ(p.op, "");
}

TEST(DebugModeProvenanceTest, RealTracerLogsNameThePlantedModule) {
  absl::StatusOr<Trace> a = ReadDebugModeLog(std::string(kDir) + "a/rank_0_activations.log");
  absl::StatusOr<Trace> b = ReadDebugModeLog(std::string(kDir) + "b/rank_0_activations.log");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  // Both phases are read from the log (the tracer writes only "Phase: backward").
  bool forward = false, backward = false;
  for (const Kernel& k : a->kernels) {
    forward |= a->PhaseOf(k) == Phase::kForward;
    backward |= a->PhaseOf(k) == Phase::kBackward;
  }
  EXPECT_TRUE(forward && backward);
  const DiffResult res = Judge(*a, *b, Align(*a, *b));
  ASSERT_TRUE(res.first_divergence.has_value());
  DiffReport report;
  report.path_a = "a";
  report.path_b = "b";
  report.ranks.push_back({0, &*a, &*b, &res});
  const std::string json = JsonSummary(report);
  simdjson::dom::parser parser;
  simdjson::dom::element fd = parser.parse(json)["first_divergence"];
  EXPECT_EQ(std::string_view(fd["a_scope"]), "layers.1.feed_forward.w1") << json;
  EXPECT_EQ(std::string_view(fd["b_scope"]), "layers.1.feed_forward.w1");
  EXPECT_NE(std::string_view(fd["a_op"]).find("addmm"), std::string_view::npos);
  EXPECT_EQ(std::string_view(fd["phase"]), "forward");
  TerminalOptions topt;
  const std::string text = TerminalSummary(report, topt);
  EXPECT_NE(text.find("in layers.1.feed_forward.w1 (aten::addmm, forward)"), std::string::npos) << text;
}

TEST(DebugModeProvenanceTest, ModulesRollUpCountsDivergencesPerModule) {
  absl::StatusOr<Trace> a = ReadDebugModeLog(std::string(kDir) + "a/rank_0_activations.log");
  absl::StatusOr<Trace> b = ReadDebugModeLog(std::string(kDir) + "b/rank_0_activations.log");
  ASSERT_TRUE(a.ok() && b.ok());
  const DiffResult res = Judge(*a, *b, Align(*a, *b));
  const std::vector<ModuleRollup> modules = RollUpModules(*a, *b, res);
  ASSERT_FALSE(modules.empty());
  uint64_t pairs = 0;
  for (const ModuleRollup& m : modules) {
    pairs += m.pairs;
    EXPECT_LE(m.diverged, m.pairs);
    EXPECT_EQ(m.first_divergence.has_value(), m.diverged > 0) << m.scope;
    // Everything of layers.0 runs before the change in forward; what diverges
    // there is in backward (the gradient flows back through it).
    if (m.scope == "layers.0.feed_forward.w1" && m.first_divergence) {
      const Kernel& k = a->kernels[res.alignment.pairs[*m.first_divergence].a];
      EXPECT_EQ(a->PhaseOf(k), Phase::kBackward);
    }
  }
  EXPECT_LE(pairs, res.counts.pairs);
  EXPECT_EQ(modules.front().scope, "tok_embeddings");
}

}  // namespace
}  // namespace numtrace::analyzer
