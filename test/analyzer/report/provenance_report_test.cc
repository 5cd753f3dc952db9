// Provenance in the analyzer's outputs: DebugMode logs from torchtitan's real
// tracer with a change planted in layers.1.feed_forward.w1 (test/data/
// debugmode-provenance) report that module, an addmm, phase forward; a trace
// without provenance gets no provenance fields; labels and the roll-up.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/provenance.h"
#include "analyzer/read/debugmode_reader.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/rank_diff.h"
#include "analyzer/report/terminal_summary.h"
#include "simdjson.h"
#include "test/analyzer/report/chromium.h"
#include "test/analyzer/report/report_fixture.h"

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

TEST(ProvenanceReportTest, TracesWithoutProvenanceGetNoProvenanceFields) {
  testing::RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("gemm", "gemm", PairStatus::kBitwiseEqual, 0);
  f.AddPair("softmax", "softmax", PairStatus::kDiverged, 1e-2);
  f.Finish();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  const std::string json = JsonSummary(report);
  for (const char* field : {"a_scope", "b_scope", "a_op", "b_op", "\"phase\"", "\"modules\""}) {
    EXPECT_EQ(json.find(field), std::string::npos) << field << " in " << json;
  }
  const std::string html = HtmlReport(report, {});
  EXPECT_EQ(html.find("\"rows_sm\""), std::string::npos);
  EXPECT_EQ(html.find("\"modules\":["), std::string::npos);
  TerminalOptions topt;
  EXPECT_EQ(TerminalSummary(report, topt).find("    in "), std::string::npos);
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

// Runs after the page's script: the card, the Modules card, the module
// column and the module filter, as a user sees them.
constexpr const char* kModuleProbe = R"js(
<script>
(function () {
  const $ = (id) => document.getElementById(id);
  const shown = () => Number($("shown").textContent.split(" ")[0]);
  const rows = () => Array.from(document.querySelectorAll("#spacer .trow"))
      .filter((r) => r.style.display !== "none").map((r) => r.children[10].textContent);
  const out = { card: $("firstbody").textContent, modules: $("modulescard").textContent,
                all: shown(), options: $("modfilter").options.length };
  $("modfilter").value = "m:layers.1.feed_forward";
  $("modfilter").dispatchEvent(new Event("change"));
  out.filtered = shown();
  out.filtered_rows = rows();
  $("modfilter").value = "";
  $("modfilter").dispatchEvent(new Event("change"));
  out.restored = shown();
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
})();
</script>
)js";

TEST(ProvenanceHtmlBrowserTest, CardModuleColumnAndFilter) {
  if (testing::Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  absl::StatusOr<Trace> a = ReadDebugModeLog(std::string(kDir) + "a/rank_0_activations.log");
  absl::StatusOr<Trace> b = ReadDebugModeLog(std::string(kDir) + "b/rank_0_activations.log");
  ASSERT_TRUE(a.ok() && b.ok());
  const DiffResult res = Judge(*a, *b, Align(*a, *b));
  DiffReport report{"a", "b", false, {{0, &*a, &*b, &res}}};
  std::string html = HtmlReport(report, {});
  html.insert(html.rfind("</body>"), kModuleProbe);
  const std::string file = "html_provenance_" + std::to_string(::getpid()) + ".html";
  const std::string dom = testing::DumpDom(html, file);
  std::filesystem::remove(std::filesystem::path(NUMTRACE_BINARY_DIR) / file);
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("numtrace-chromium-" + file));
  const size_t begin = dom.find("<pre id=\"probe\">");
  ASSERT_NE(begin, std::string::npos) << dom.substr(0, 2000);
  const size_t end = dom.find("</pre>", begin);
  simdjson::dom::parser parser;
  simdjson::dom::element out = parser.parse(dom.substr(begin + 16, end - begin - 16));
  EXPECT_NE(std::string_view(out["card"]).find("in layers.1.feed_forward.w1 (aten::addmm, forward)"),
            std::string_view::npos) << std::string_view(out["card"]);
  EXPECT_NE(std::string_view(out["modules"]).find("layers.1.feed_forward.w1"), std::string_view::npos);
  EXPECT_GT(int64_t(out["options"]), 10);
  const int64_t all = int64_t(out["all"]), filtered = int64_t(out["filtered"]);
  EXPECT_GT(filtered, 0);
  EXPECT_LT(filtered, all);
  EXPECT_EQ(int64_t(out["restored"]), all);
  for (simdjson::dom::element r : out["filtered_rows"].get_array()) {
    EXPECT_EQ(std::string_view(r).substr(0, 21), "layers.1.feed_forward") << std::string_view(r);
  }
}

}  // namespace
}  // namespace numtrace::analyzer
