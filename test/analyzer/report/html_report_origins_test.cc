// File: test/analyzer/report/html_report_origins_test.cc
//
// The HTML report's origins panel, cause column and cause filter, driven in
// headless chromium the way html_report_interaction_test.cc drives the
// table: a probe script clicks an origin and the cause chips and writes what
// the page then shows (panel entries, highlighted rows, plot pixels) into
// the DOM as JSON.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "analyzer/report/html_report.h"
#include "test/analyzer/report/chromium.h"
#include "test/analyzer/report/report_fixture.h"

namespace numtrace::analyzer {
namespace {

using testing::Chromium;
using testing::RankFixture;

// Rows 0..9 equal; row 10 an origin beyond tolerance writing 0x2000, rows
// 11..15 read it (their inputs differ) and diverge; row 16 an origin within
// tolerance writing 0x4000, rows 17..18 read it and diverge; row 19 equal.
RankFixture Flow() {
  RankFixture f(0, "flow_a.jsonl", "flow_b.jsonl");
  for (int i = 0; i < 10; ++i) f.AddFlowPair("equal_kernel", PairStatus::kBitwiseEqual, 0, 0x1000 + i);
  f.AddFlowPair("origin_big", PairStatus::kDiverged, 0.5, 0x2000);
  for (int i = 0; i < 5; ++i) f.AddFlowPair("heir_of_big", PairStatus::kDiverged, 1e-3, 0x3000 + i, 0x2000, 1, 2);
  f.AddFlowPair("origin_noise", PairStatus::kWithinTolerance, 1e-6, 0x4000);
  for (int i = 0; i < 2; ++i) f.AddFlowPair("heir_of_noise", PairStatus::kDiverged, 1e-4, 0x5000 + i, 0x4000, 3, 4);
  f.AddFlowPair("equal_kernel", PairStatus::kBitwiseEqual, 0, 0x6000);
  f.Finish();
  return f;
}

constexpr const char* kOriginsProbe = R"js(
<script>
window.numtraceReady.then(function () {
  const $ = (id) => document.getElementById(id);
  const out = {};
  const shown = () => Number($("shown").textContent.split(" ")[0]);
  const rows = () => Array.from(document.querySelectorAll("#spacer .trow"))
      .filter((r) => r.style.display !== "none")
      .map((r) => ({ row: Number(r.dataset.row), cause: r.children[7].textContent, score: r.children[8].textContent,
                     desc: r.classList.contains("desc"), origin: r.classList.contains("origin") }));
  const purple = () => {
    const cv = $("plot"), g = cv.getContext("2d");
    const d = g.getImageData(0, 0, cv.width, cv.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 0x7b && d[i + 1] === 0x1f && d[i + 2] === 0xa2) n++;
    return n;
  };
  const entries = () => Array.from(document.querySelectorAll("#origins li"))
      .map((li) => ({ row: Number(li.dataset.row), text: li.textContent, on: li.classList.contains("on") }));
  out.initial = { entries: entries(), rows: rows(), purple: purple(), first: $("firstbody").textContent };
  // Click the second origin (the noise one): it and its two heirs light up.
  document.querySelectorAll("#origins li a")[1].click();
  $("viewport").scrollTop = 0;
  $("viewport").dispatchEvent(new Event("scroll"));
  out.selected = { entries: entries(), rows: rows(), purple: purple(), info: $("rowinfo").textContent };
  // Cause chips: "inherited" off hides the 7 heirs.
  Array.from($("causefilters").querySelectorAll(".chip")).find((c) => c.textContent === "inherited").click();
  out.no_inherited = { shown: shown(), rows: rows() };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
});
</script>
)js";

TEST(HtmlReportOriginsTest, PanelSelectsAnOriginAndHighlightsWhatItReaches) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  RankFixture f = Flow();
  ASSERT_EQ(f.result().origins.count, 2u);
  DiffReport report{"flow_a.jsonl", "flow_b.jsonl", false, {f.Diff()}};
  std::string html = HtmlReport(report, {});
  std::string dom_head;
  simdjson::padded_string json(testing::RunProbe(html, kOriginsProbe, "html_report_origins", &dom_head));
  ASSERT_GT(json.size(), 0u) << "the probe did not run: " << dom_head;
  simdjson::dom::parser parser;
  simdjson::dom::element out;
  ASSERT_EQ(parser.parse(json).get(out), simdjson::SUCCESS) << std::string_view(json);

  // The panel: both origins, by score, with how far each reaches.
  simdjson::dom::array entries = out["initial"]["entries"];
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(int64_t(entries.at(0)["row"]), 10);
  EXPECT_NE(std::string_view(entries.at(0)["text"]).find("reaches 5"), std::string_view::npos);
  EXPECT_EQ(int64_t(entries.at(1)["row"]), 16);
  EXPECT_NE(std::string_view(entries.at(1)["text"]).find("reaches 2"), std::string_view::npos);
  EXPECT_EQ(int64_t(out["initial"]["purple"]), 0) << "nothing highlighted before a click";
  EXPECT_NE(std::string_view(out["initial"]["first"]).find("cause origin"), std::string_view::npos);
  // Cause column.
  for (auto r : simdjson::dom::array(out["initial"]["rows"])) {
    const int64_t row = int64_t(r["row"]);
    const std::string_view cause = r["cause"];
    if (row == 10 || row == 16) EXPECT_EQ(cause, "origin") << row;
    else if (row >= 11 && row <= 18) EXPECT_EQ(cause, "inherited") << row;
    else EXPECT_EQ(cause, "") << row;
  }

  // After the click: the noise origin is selected, its heirs (17, 18) and
  // only they are highlighted, and the plot marks them.
  simdjson::dom::element sel = out["selected"];
  EXPECT_TRUE(bool(simdjson::dom::array(sel["entries"]).at(1)["on"]));
  EXPECT_GT(int64_t(sel["purple"]), 0);
  EXPECT_NE(std::string_view(sel["info"]).find("row 16:"), std::string_view::npos) << std::string_view(sel["info"]);
  int desc = 0;
  for (auto r : simdjson::dom::array(sel["rows"])) {
    const int64_t row = int64_t(r["row"]);
    EXPECT_EQ(bool(r["desc"]), row == 17 || row == 18) << row;
    EXPECT_EQ(bool(r["origin"]), row == 16) << row;
    desc += bool(r["desc"]);
  }
  EXPECT_EQ(desc, 2);

  // The cause filter.
  EXPECT_EQ(int64_t(out["no_inherited"]["shown"]), 20 - 7);
  for (auto r : simdjson::dom::array(out["no_inherited"]["rows"])) EXPECT_NE(std::string_view(r["cause"]), "inherited");
}

}  // namespace
}  // namespace numtrace::analyzer
