// File: test/analyzer/report/html_report_interaction_test.cc
//
// The HTML report's controls, driven in headless chromium: a probe script
// appended to the page clicks the status and match-method chips, types
// regexes into the search box and presses "Jump to first divergence", and
// writes what the table then shows (row count, rendered rows, selection,
// scroll position) into the DOM as JSON, which the test checks against the
// answers known from the fixture.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "analyzer/report/html_report.h"
#include "test/analyzer/report/chromium.h"
#include "test/analyzer/report/report_fixture.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

using testing::Chromium;
using testing::DumpDom;
using testing::RankFixture;

// 300 pairs + 2 unmatched rows. Rows 0..199 cycle gemm/add (exact, equal),
// 200..239 are fused (fuzzy, within tolerance), 240..259 softmax diverges
// (exact, values) - row 240 is the first divergence - and 260..299 are
// layer_norm again equal but matched by value. Then one only-in-A and one
// only-in-B row.
constexpr int kRows = 302;
constexpr int kFirstDivergence = 240;
constexpr int kValues = 20;
constexpr int kSoftmax = 20;

RankFixture Controls() {
  RankFixture f(0, "ctl_a.jsonl", "ctl_b.jsonl");
  for (int i = 0; i < 200; ++i) {
    const char* name = i % 2 ? "add_kernel" : "gemm_kernel";
    f.AddPair(name, name, PairStatus::kBitwiseEqual, 0, MatchMethod::kExact);
  }
  for (int i = 0; i < 40; ++i) f.AddPair("fused_a", "fused_b", PairStatus::kWithinTolerance, 1e-7, MatchMethod::kFuzzy);
  for (int i = 0; i < 20; ++i) f.AddPair("softmax_kernel", "softmax_kernel", PairStatus::kDiverged, 1e-3 * (i + 1));
  for (int i = 0; i < 40; ++i) f.AddPair("layer_norm", "layer_norm", PairStatus::kBitwiseEqual, 0, MatchMethod::kValue);
  f.AddOnlyA("only_a_copy");
  f.AddOnlyB("only_b_fill");
  f.Finish();
  return f;
}

// Runs once the page's own script has built the table (window.numtraceReady).
constexpr const char* kProbe = R"js(
<script>
window.numtraceReady.then(function () {
  const $ = (id) => document.getElementById(id);
  const out = {};
  const shown = () => Number($("shown").textContent.split(" ")[0]);
  const rows = () => Array.from(document.querySelectorAll("#spacer .trow"))
      .filter((r) => r.style.display !== "none")
      .map((r) => ({ row: Number(r.dataset.row), a: r.children[2].textContent, b: r.children[4].textContent,
                     method: r.children[5].textContent, status: r.children[6].textContent,
                     sel: r.classList.contains("sel") }));
  const chip = (box, text) => Array.from($(box).querySelectorAll(".chip"))
      .find((c) => c.textContent.split(" ")[0] === text);
  const search = (text) => { $("search").value = text; $("search").dispatchEvent(new Event("input")); };
  const visibleSelected = () => {
    const vp = $("viewport"), sel = document.querySelector("#spacer .trow.sel");
    if (!sel) return null;
    const top = Math.round(sel.offsetTop - vp.scrollTop);
    return { row: Number(sel.dataset.row), top: top, visible: top >= 0 && top + sel.offsetHeight <= vp.clientHeight,
             scrolled: Math.round(vp.scrollTop) };
  };
  out.initial = { shown: shown(), selected: visibleSelected() };

  // Status chips: everything off but "values".
  ["equal", "within tol", "nonfinite", "layout", "only A", "only B"].forEach((s) =>
    Array.from($("statusfilters").querySelectorAll(".chip")).find((c) => c.textContent === s).click());
  out.values_only = { shown: shown(), rows: rows() };
  Array.from($("statusfilters").querySelectorAll(".chip:not(.on)")).forEach((c) => c.click());
  out.status_restored = shown();

  // Method chips: exact off (unmatched rows have no method and stay).
  chip("methodfilters", "exact").click();
  $("viewport").scrollTop = 0;
  $("viewport").dispatchEvent(new Event("scroll"));
  out.no_exact = { shown: shown(), rows: rows() };
  chip("methodfilters", "exact").click();

  // Regex search over names, case-insensitive; a bad regex changes nothing.
  search("^SOFT");
  out.regex_softmax = { shown: shown(), rows: rows() };
  search("fused_b|only_");
  out.regex_alt = { shown: shown(), rows: rows() };
  search("(");
  out.regex_bad = { shown: shown(), bad: $("search").classList.contains("bad") };

  // Jump: from a filtered table scrolled to the top, the button must bring
  // back the first divergence, select it and scroll it into view.
  search("gemm");
  $("viewport").scrollTop = 0;
  out.before_jump = shown();
  $("jumpfirst").click();
  out.jump = { shown: shown(), selected: visibleSelected(), info: $("rowinfo").textContent,
               search: $("search").value };

  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
});
</script>
)js";

class HtmlReportInteractionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (Chromium().empty()) return;
    RankFixture f = Controls();
    DiffReport report{"ctl_a.jsonl", "ctl_b.jsonl", false, {f.Diff()}};
    std::string html = HtmlReport(report, {});
    const size_t body = html.rfind("</body>");
    ASSERT_NE(body, std::string::npos);
    html.insert(body, kProbe);
    // ctest runs each TEST in its own process, two at once with -j2: one
    // page (and browser profile) per process.
    const std::string file = "html_report_controls_" + std::to_string(::getpid()) + ".html";
    std::string dom = DumpDom(html, file);
    std::filesystem::remove(std::filesystem::path(NUMTRACE_BINARY_DIR) / file);
    std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("numtrace-chromium-" + file));
    const std::string open = "<pre id=\"probe\">";
    const size_t begin = dom.find(open);
    ASSERT_NE(begin, std::string::npos) << "the probe did not run: " << dom.substr(0, 3000);
    const size_t end = dom.find("</pre>", begin);
    // The DOM serializer escapes text: our names and the JSON use no '<', '>' or '&'.
    json_ = new simdjson::padded_string(dom.substr(begin + open.size(), end - begin - open.size()));
  }
  static void TearDownTestSuite() {
    delete json_;
    json_ = nullptr;
  }
  void SetUp() override {
    if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
    ASSERT_NE(json_, nullptr);
    auto doc = parser_.parse(*json_);
    ASSERT_EQ(doc.error(), simdjson::SUCCESS) << std::string_view(*json_);
    out_ = doc.value();
  }
  static int64_t Shown(simdjson::dom::element e) { return int64_t(e["shown"]); }

  static simdjson::padded_string* json_;
  simdjson::dom::parser parser_;
  simdjson::dom::element out_;
};
simdjson::padded_string* HtmlReportInteractionTest::json_ = nullptr;

TEST_F(HtmlReportInteractionTest, OpensSelectedAtTheFirstDivergence) {
  EXPECT_EQ(Shown(out_["initial"]), kRows);
  simdjson::dom::element sel = out_["initial"]["selected"];
  EXPECT_EQ(int64_t(sel["row"]), kFirstDivergence);
  EXPECT_TRUE(bool(sel["visible"]));
}

TEST_F(HtmlReportInteractionTest, StatusChipsFilterRows) {
  EXPECT_EQ(Shown(out_["values_only"]), kValues);
  simdjson::dom::array rows = out_["values_only"]["rows"];
  EXPECT_GT(rows.size(), 0u);
  for (auto r : rows) {
    EXPECT_EQ(std::string_view(r["status"]), "diverged values");
    EXPECT_EQ(std::string_view(r["a"]), "softmax_kernel");
  }
  EXPECT_EQ(int64_t(out_["status_restored"]), kRows);
}

TEST_F(HtmlReportInteractionTest, MethodChipsFilterRows) {
  // 200 gemm/add + 20 softmax rows were matched exact.
  EXPECT_EQ(Shown(out_["no_exact"]), kRows - 200 - kSoftmax);
  simdjson::dom::array rows = out_["no_exact"]["rows"];
  EXPECT_GT(rows.size(), 10u);
  for (auto r : rows) {
    EXPECT_NE(std::string_view(r["method"]), "exact") << int64_t(r["row"]);
  }
  // Scrolled to the top: the fuzzy rows come first.
  EXPECT_EQ(std::string_view(rows.at(0)["method"]), "fuzzy");
}

TEST_F(HtmlReportInteractionTest, RegexSearchFiltersByKernelName) {
  EXPECT_EQ(Shown(out_["regex_softmax"]), kSoftmax);
  for (auto r : simdjson::dom::array(out_["regex_softmax"]["rows"])) {
    EXPECT_EQ(std::string_view(r["a"]), "softmax_kernel");
  }
  // Matches on either side: fused_b is only B's name; plus both unmatched rows.
  EXPECT_EQ(Shown(out_["regex_alt"]), 40 + 2);
  // An unfinished regex is flagged and leaves the last good filter in place.
  EXPECT_TRUE(bool(out_["regex_bad"]["bad"]));
  EXPECT_EQ(Shown(out_["regex_bad"]), 40 + 2);
}

TEST_F(HtmlReportInteractionTest, JumpButtonClearsFiltersAndScrollsToTheFirstDivergence) {
  EXPECT_EQ(int64_t(out_["before_jump"]), 100) << "the gemm filter hid the first divergence";
  simdjson::dom::element jump = out_["jump"];
  EXPECT_EQ(Shown(jump), kRows);
  EXPECT_EQ(std::string_view(jump["search"]), "");
  simdjson::dom::element sel = jump["selected"];
  ASSERT_TRUE(sel.is_object()) << "no selected row rendered";
  EXPECT_EQ(int64_t(sel["row"]), kFirstDivergence);
  EXPECT_TRUE(bool(sel["visible"])) << "top " << int64_t(sel["top"]);
  EXPECT_GT(int64_t(sel["scrolled"]), 0);
  EXPECT_NE(std::string_view(jump["info"]).find("row 240: diverged values"), std::string_view::npos)
      << std::string_view(jump["info"]);
}

}  // namespace
}  // namespace numtrace::analyzer
