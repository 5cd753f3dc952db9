// File: test/analyzer/report/html_report_scale_test.cc
//
// The HTML report at scale, in headless chromium (ctest label `html_scale`):
// 100,000 pairs whose runs part at pair 50,000 (every pair after it
// diverges). The file stays under 5 MB; the page opens on the first
// divergence (card and selected row), every row is reachable by scrolling,
// and the status chips, the regex search and the sort work over all rows,
// not just the rendered ones. A probe waits for window.numtraceReady, acts,
// and writes what the page then shows into the DOM as JSON.
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

constexpr int kPairs = 100000;
constexpr int kPartAt = 50000;
constexpr int kNames = 700;  // distinct op names, cycled like a model's layers

std::string NameOf(int i) { return "layers." + std::to_string(i % kNames / 20) + "/op_" + std::to_string(i % kNames); }

RankFixture Parting() {
  RankFixture f(0, "dm_a.log", "dm_b.log");
  for (int i = 0; i < kPairs; ++i) {
    const std::string name = NameOf(i);
    if (i < kPartAt) {
      f.AddPair(name, name, PairStatus::kBitwiseEqual, 0);
    } else {
      // Growing with the distance from the parting point (scores keep two
      // significant digits), the last 100 pairs ten times beyond the rest.
      f.AddPair(name, name, PairStatus::kDiverged, i >= kPairs - 100 ? 0.5 : 1e-4 * (1 + (i - kPartAt) / 100));
    }
  }
  f.Finish();
  return f;
}

constexpr const char* kScaleProbe = R"js(
<script>
window.numtraceReady.then(function () {
  const $ = (id) => document.getElementById(id);
  const vp = $("viewport");
  const shown = () => Number($("shown").textContent.split(" ")[0]);
  const rows = () => Array.from(document.querySelectorAll("#spacer .trow"))
      .filter((r) => r.style.display !== "none")
      .map((r) => ({ row: Number(r.dataset.row), a: r.children[2].textContent, status: r.children[6].textContent,
                     top: Math.round(r.offsetTop - vp.scrollTop) }))
      .filter((r) => r.top >= 0 && r.top < vp.clientHeight);
  const scroll = (y) => { vp.scrollTop = y; vp.dispatchEvent(new Event("scroll")); };
  const out = { ms: Math.round(performance.now()) };
  const sel = document.querySelector("#spacer .trow.sel");
  out.initial = { shown: shown(), first: $("firstbody").textContent, selected: sel ? Number(sel.dataset.row) : -1,
                  rows: rows().map((r) => r.row) };
  scroll(vp.scrollHeight);
  out.bottom = rows().map((r) => r.row);
  scroll(12345 * 24);
  out.middle = rows().map((r) => r.row);
  // Status chips: only the diverged rows.
  for (const s of ["equal", "within tol"]) Array.from($("statusfilters").querySelectorAll(".chip")).find((c) => c.textContent === s).click();
  out.diverged = shown();
  // Then a regex over names, among them.
  $("search").value = "/op_7$"; $("search").dispatchEvent(new Event("input"));
  scroll(0);
  out.regex = { shown: shown(), rows: rows() };
  // Sort by score: the largest scores first, over every matching row.
  $("search").value = ""; $("search").dispatchEvent(new Event("input"));
  Array.from($("sort").querySelectorAll(".chip")).find((c) => c.dataset.sort === "score").click();
  scroll(0);
  out.sorted = rows().map((r) => r.row);
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
});
</script>
)js";

TEST(HtmlReportScaleTest, HundredThousandRowsOpenAtTheFirstDivergenceScrollFilterAndSort) {
  RankFixture f = Parting();
  DiffReport report{"dm_a.log", "dm_b.log", false, {f.Diff()}};
  std::string html = HtmlReport(report, {});
  std::printf("HTML report: %zu bytes for %d rows, %d diverged\n", html.size(), kPairs, kPairs - kPartAt);
  EXPECT_LT(html.size(), 5u << 20);
  if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  std::string dom_head;
  simdjson::padded_string json(testing::RunProbe(html, kScaleProbe, "html_report_scale", &dom_head));
  ASSERT_GT(json.size(), 0u) << "the probe did not run: " << dom_head;
  simdjson::dom::parser parser;
  simdjson::dom::element out;
  ASSERT_EQ(parser.parse(json).get(out), simdjson::SUCCESS) << std::string_view(json);
  std::printf("page ready after %lld ms (virtual time)\n", static_cast<long long>(int64_t(out["ms"])));

  // Opened on the first divergence: the card names it, its row is selected and in view.
  simdjson::dom::element initial = out["initial"];
  EXPECT_EQ(int64_t(initial["shown"]), kPairs);
  EXPECT_NE(std::string_view(initial["first"]).find("A seq " + std::to_string(kPartAt)), std::string_view::npos)
      << std::string_view(initial["first"]).substr(0, 300);
  EXPECT_EQ(int64_t(initial["selected"]), kPartAt);
  bool in_view = false;
  for (auto r : simdjson::dom::array(initial["rows"])) in_view |= int64_t(r) == kPartAt;
  EXPECT_TRUE(in_view);
  // Scrolling reaches the last row and any row in between.
  simdjson::dom::array bottom = out["bottom"];
  ASSERT_GT(bottom.size(), 0u);
  EXPECT_EQ(int64_t(bottom.at(bottom.size() - 1)), kPairs - 1);
  simdjson::dom::array middle = out["middle"];
  ASSERT_GT(middle.size(), 0u);
  EXPECT_EQ(int64_t(middle.at(0)), 12345);
  // Filters count every row, rendered or not.
  EXPECT_EQ(int64_t(out["diverged"]), kPairs - kPartAt);
  int expected = 0;
  for (int i = kPartAt; i < kPairs; ++i) expected += i % kNames == 7;
  EXPECT_EQ(int64_t(out["regex"]["shown"]), expected);
  for (auto r : simdjson::dom::array(out["regex"]["rows"])) {
    EXPECT_EQ(std::string_view(r["a"]).substr(std::string_view(r["a"]).size() - 5), "/op_7");
    EXPECT_EQ(std::string_view(r["status"]), "diverged values");
    EXPECT_GE(int64_t(r["row"]), kPartAt);
  }
  // Sorted by score: the top rows are the last 100 pairs (the largest score).
  simdjson::dom::array sorted = out["sorted"];
  ASSERT_GT(sorted.size(), 10u);
  for (auto r : sorted) EXPECT_GE(int64_t(r), kPairs - 100);
  EXPECT_EQ(int64_t(sorted.at(0)), kPairs - 100) << "equal scores keep launch order";
}

}  // namespace
}  // namespace numtrace::analyzer
