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
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

const std::string kDir = std::string(NUMTRACE_SOURCE_DIR) + "/test/data/debugmode-provenance/";

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
  EXPECT_EQ(html.find("\"scopes\":["), std::string::npos) << "no module column";
  EXPECT_EQ(html.find("data-id=\"modulescard\""), std::string::npos) << "no modules card";
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
  absl::StatusOr<Trace> a = ReadTrace(std::string(kDir) + "a/rank_0_activations.log", FindImporter("debugmode-log"));
  absl::StatusOr<Trace> b = ReadTrace(std::string(kDir) + "b/rank_0_activations.log", FindImporter("debugmode-log"));
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
  absl::StatusOr<Trace> a = ReadTrace(std::string(kDir) + "a/rank_0_activations.log", FindImporter("debugmode-log"));
  absl::StatusOr<Trace> b = ReadTrace(std::string(kDir) + "b/rank_0_activations.log", FindImporter("debugmode-log"));
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
window.numtraceReady.then(function () {
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
});
</script>
)js";

TEST(ProvenanceHtmlBrowserTest, CardModuleColumnAndFilter) {
  if (testing::Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  absl::StatusOr<Trace> a = ReadTrace(std::string(kDir) + "a/rank_0_activations.log", FindImporter("debugmode-log"));
  absl::StatusOr<Trace> b = ReadTrace(std::string(kDir) + "b/rank_0_activations.log", FindImporter("debugmode-log"));
  ASSERT_TRUE(a.ok() && b.ok());
  const DiffResult res = Judge(*a, *b, Align(*a, *b));
  DiffReport report{"a", "b", false, {{0, &*a, &*b, &res}}};
  std::string dom_head;
  const std::string probe = testing::RunProbe(HtmlReport(report, {}), kModuleProbe, "html_provenance", &dom_head);
  ASSERT_FALSE(probe.empty()) << dom_head;
  simdjson::dom::parser parser;
  simdjson::dom::element out = parser.parse(probe);
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

// A first divergence whose kernels carry src (trace format 1.2): the JSON
// summary has a_src/b_src beside a_scope, the terminal card's "in" line and
// the HTML card show it; a src that is not UTF-8 is escaped like a scope.
struct SrcFixture {
  testing::RankFixture f{0, "a.jsonl", "b.jsonl"};
  explicit SrcFixture(std::string_view src_b) {
    f.AddPair("gemm", "gemm", PairStatus::kBitwiseEqual, 0);
    f.AddPair("softmax", "softmax", PairStatus::kDiverged, 1e-2);
    f.Finish();
    KernelProvenance pa;
    pa.scope = f.a().strings.Intern("layers.1.fc");
    pa.op = f.a().strings.Intern("aten::softmax");
    pa.phase = Phase::kForward;
    pa.src = f.a().strings.Intern("train.py:42");
    f.a().SetProvenance(1, pa);
    KernelProvenance pb;
    pb.scope = f.b().strings.Intern("layers.1.fc");
    pb.op = f.b().strings.Intern("aten::softmax");
    pb.phase = Phase::kForward;
    pb.src = f.b().strings.Intern(src_b);
    f.b().SetProvenance(1, pb);
  }
  DiffReport Report() const { return DiffReport{"a.jsonl", "b.jsonl", false, {f.Diff()}}; }
};

TEST(ProvenanceReportTest, SrcIsReportedInJsonTerminalAndHtml) {
  SrcFixture sf("model.py:7");
  const DiffReport report = sf.Report();
  const std::string json = JsonSummary(report);
  simdjson::dom::parser parser;
  simdjson::dom::element fd = parser.parse(json)["first_divergence"];
  EXPECT_EQ(std::string_view(fd["a_src"]), "train.py:42") << json;
  EXPECT_EQ(std::string_view(fd["b_src"]), "model.py:7") << json;
  EXPECT_EQ(std::string_view(fd["a_scope"]), "layers.1.fc");
  TerminalOptions topt;
  const std::string text = TerminalSummary(report, topt);
  EXPECT_NE(text.find("    in layers.1.fc (aten::softmax, forward) at train.py:42  |  B: layers.1.fc "
                      "(aten::softmax, forward) at model.py:7\n"),
            std::string::npos) << text;
  const std::string html = HtmlReport(report, {});
  // In the embedded summary and in the card's markup.
  EXPECT_NE(html.find("\"a_src\":\"train.py:42\""), std::string::npos);
  EXPECT_NE(html.find("in <b class=\"mono\">layers.1.fc (aten::softmax, forward) at train.py:42</b>"), std::string::npos);
  EXPECT_EQ(ProvenanceLabel(std::nullopt, std::nullopt, Phase::kNone, std::string_view("t.py:1")), "t.py:1");
  EXPECT_EQ(ProvenanceLabel(std::string_view("fc"), std::nullopt, Phase::kNone, std::string_view("t.py:1")),
            "fc at t.py:1");
}

TEST(ProvenanceReportTest, SrcThatIsNotUtf8IsEscapedEverywhere) {
  SrcFixture sf("bad\xff\x1b[2J.py:7");
  const DiffReport report = sf.Report();
  const std::string json = JsonSummary(report);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;  // still valid JSON
  EXPECT_NE(json.find("\"b_src\":\"bad\\u00ff\\u001b[2J.py:7\""), std::string::npos) << json;
  TerminalOptions topt;
  const std::string text = TerminalSummary(report, topt);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("at bad\\xff^[[2J.py:7"), std::string::npos) << text;
}

TEST(ProvenanceHtmlBrowserTest, CardShowsSrc) {
  if (testing::Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  SrcFixture sf("model.py:7");
  std::string html = HtmlReport(sf.Report(), {});
  html.insert(html.rfind("</body>"),
              "<script>window.numtraceReady.then(function(){const p=document.createElement('pre');p.id='probe';"
              "p.textContent=document.getElementById('firstbody').textContent;document.body.append(p);});"
              "</script>");
  const std::string file = "html_src_" + std::to_string(::getpid()) + ".html";
  const std::string dom = testing::DumpDom(html, file);
  std::filesystem::remove(std::filesystem::path(NUMTRACE_BINARY_DIR) / file);
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("numtrace-chromium-" + file));
  const size_t begin = dom.find("<pre id=\"probe\">");
  ASSERT_NE(begin, std::string::npos) << dom.substr(0, 2000);
  const std::string card = dom.substr(begin, dom.find("</pre>", begin) - begin);
  EXPECT_NE(card.find("in layers.1.fc (aten::softmax, forward) at train.py:42"), std::string::npos) << card;
  EXPECT_NE(card.find("B: layers.1.fc (aten::softmax, forward) at model.py:7"), std::string::npos) << card;
}

}  // namespace
}  // namespace numtrace::analyzer
