#include "analyzer/report/html_report.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "analyzer/report/json_summary.h"
#include "test/analyzer/report/chromium.h"
#include "test/analyzer/report/report_fixture.h"
#include "test/util/kernel_names.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

using testing::Chromium;
using testing::DumpDom;
using testing::RankFixture;

constexpr const char* kEvilName = "<script>alert(1)</script> &amp; \"q\" 'k' </script><img src=x onerror=alert(2)>";

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// The JSON text between a data block's tags ("numtrace-data": the row
// table, "numtrace-summary": the --json summary).
std::string DataBlock(const std::string& html, const std::string& id = "numtrace-data") {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  size_t begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  begin += open.size();
  size_t end = html.find("</script>", begin);
  EXPECT_NE(end, std::string::npos);
  return html.substr(begin, end - begin);
}

// One column of a rank's row table, decoded as html_report.h describes it
// (base64, deflate, LEB128 values column after column).
std::vector<uint64_t> Column(simdjson::dom::element rank, std::string_view name) {
  std::string packed;
  const std::string_view b64 = rank["data"];
  EXPECT_TRUE(absl::Base64Unescape(absl::string_view(b64.data(), b64.size()), &packed));
  std::string raw(64 << 20, '\0');
  uLongf size = raw.size();
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(raw.data()), &size, reinterpret_cast<const Bytef*>(packed.data()),
                       packed.size()), Z_OK);
  raw.resize(size);
  size_t at = 0, len = 0;
  simdjson::dom::array names = rank["columns"], lengths = rank["lengths"];
  for (size_t c = 0; c < names.size(); ++c) {
    len = uint64_t(lengths.at(c));
    if (std::string_view(names.at(c)) == name) break;
    at += len;
  }
  std::vector<uint64_t> values;
  for (size_t p = at; p < at + len;) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(raw[p++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    values.push_back(v);
  }
  return values;
}

RankFixture Evil() {
  RankFixture f(0, "a<b>.jsonl", "b&c.jsonl");
  f.AddPair("fine_kernel", "fine_kernel", PairStatus::kBitwiseEqual, 0);
  f.AddPair("before\xE2\x80\xA8line", "before\xE2\x80\xA8line", PairStatus::kWithinTolerance, 1e-7);
  f.AddPair(kEvilName, kEvilName, PairStatus::kDiverged, 2.5e-2);
  f.AddOnlyB("extra<b>");
  f.Finish();
  return f;
}

TEST(HtmlReportTest, ScriptSafeStringEscapesMarkupCharacters) {
  std::string out;
  AppendScriptSafeJsonString("</script>&\xE2\x80\xA8\xE2\x80\xA9\"", &out);
  EXPECT_EQ(out, "\"\\u003c/script\\u003e\\u0026\\u2028\\u2029\\\"\"");
}

TEST(HtmlReportTest, DataBlockHasNoMarkupAndParsesBack) {
  RankFixture f = Evil();
  DiffReport report{"a<b>.jsonl", "b&c.jsonl", false, {f.Diff()}};
  std::string html = HtmlReport(report, {});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("__NUMTRACE_"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 3u);  // the summary block, the row table block and the page's code
  EXPECT_EQ(html.find("http://"), std::string::npos) << "no network";
  EXPECT_EQ(html.find("https://"), std::string::npos) << "no network";
  // The summary block is the --json document itself (script-safe escaped).
  std::string summary = DataBlock(html, "numtrace-summary");
  EXPECT_EQ(summary.find_first_of("<>&"), std::string::npos);
  std::string expected;
  AppendScriptSafe(JsonSummary(report), &expected);
  EXPECT_EQ(summary, expected);
  simdjson::dom::parser summary_parser;
  simdjson::padded_string summary_padded(summary);
  simdjson::dom::element s;
  ASSERT_EQ(summary_parser.parse(summary_padded).get(s), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(s["a"]["path"]), "a<b>.jsonl");
  EXPECT_EQ(uint64_t(s["first_divergence"]["a_seq"]), 2u);
  EXPECT_EQ(std::string_view(s["first_divergence"]["a_name"]), kEvilName);
  // The row table.
  std::string data = DataBlock(html);
  EXPECT_EQ(data.find_first_of("<>&"), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::padded_string padded(data);
  auto doc = parser.parse(padded);
  ASSERT_EQ(doc.error(), simdjson::SUCCESS);
  simdjson::dom::element rank = doc.value()["ranks"].at(0).value();
  EXPECT_EQ(int64_t(rank["first"]), 2);  // the third row
  simdjson::dom::array names = rank["names"];
  bool found = false;
  for (auto n : names) found |= std::string_view(n) == kEvilName;
  EXPECT_TRUE(found);
  EXPECT_EQ(int64_t(rank["n"]), 4);
  std::vector<int64_t> status;
  const size_t kinds = simdjson::dom::array(doc.value()["statuses"]).size();
  for (uint64_t k : Column(rank, "kind")) status.push_back(int64_t(k % kinds));
  EXPECT_EQ(status, (std::vector<int64_t>{0, 1, 2, 6}));  // 6: only in B
  // The markup summary (readable without JavaScript) carries the names as text.
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp; &quot;q&quot; &#39;k&#39;"), std::string::npos);
}

TEST(HtmlReportTest, ScoreCodesKeepTwoDigitsAndOrder) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  const double rels[] = {0, 1.5e-7, 2.5e-2, 0.15, 1.04, 9.96, 150, 3.3e5};
  for (double r : rels) f.AddPair("k", "k", r == 0 ? PairStatus::kBitwiseEqual : PairStatus::kDiverged, r);
  f.Finish();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  simdjson::padded_string padded(DataBlock(HtmlReport(report, {})));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(padded).get(doc), simdjson::SUCCESS);
  const std::vector<uint64_t> codes = Column(doc["ranks"].at(0).value(), "rel");
  ASSERT_EQ(codes.size(), std::size(rels));
  EXPECT_EQ(codes[0], 0u);
  for (size_t i = 1; i < codes.size(); ++i) {
    EXPECT_GT(codes[i], codes[i - 1]) << i;
    // The page's decoding: m x 10^(e-1).
    const uint64_t c = codes[i] - 1;
    const double v = double(c % 90 + 10) * std::pow(10.0, double(c / 90) - 331);
    EXPECT_NEAR(v, rels[i], rels[i] * 0.05) << i;
  }
}

TEST(HtmlReportTest, DataNamesItsEnumsAndShowsIncompleteTracesAndCounters) {
  RankFixture f = Evil();
  FooterRecord footer;
  footer.unmeasured = 7;
  footer.dropped = 2;
  footer.counters = {{"launches_seen", 120}};
  f.b().footer = footer;
  f.a().truncated = true;
  f.a().digests.push_back(StepDigest{4, 3, 0x77, std::nullopt, /*lost=*/3, 0});  // watch: 3 not digested
  DiffReport report{"a<b>.jsonl", "b&c.jsonl", false, {f.Diff()}};
  const std::string html = HtmlReport(report, {});
  simdjson::padded_string padded(DataBlock(html));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(padded).get(doc), simdjson::SUCCESS);
  // Row kinds, causes and methods come from the analyzer's lists.
  std::vector<std::string_view> statuses;
  for (auto v : simdjson::dom::array(doc["statuses"])) statuses.push_back(v);
  EXPECT_EQ(statuses, (std::vector<std::string_view>{"bitwise_equal", "within_tolerance", "values", "nonfinite",
                                                     "layout", "only_a", "only_b"}));
  EXPECT_EQ(simdjson::dom::array(doc["causes"]).size(), static_cast<size_t>(kCauseCount));
  EXPECT_EQ(simdjson::dom::array(doc["methods"]).size(), static_cast<size_t>(kMatchMethodCount));
  // Warnings and notes are in the summary's markup (escaped).
  EXPECT_NE(html.find("warning: a&lt;b&gt;.jsonl is truncated (cut short"), std::string::npos);
  EXPECT_NE(html.find("records dropped (2)"), std::string::npos);
  EXPECT_NE(html.find("7 kernels ran unmeasured in B"), std::string::npos);
  EXPECT_NE(html.find("3 launches not digested in A"), std::string::npos);
  EXPECT_NE(html.find(">B counters: launches_seen 120<"), std::string::npos);
  EXPECT_EQ(Count(html, " counters: "), 1u);
  simdjson::padded_string summary_padded(DataBlock(html, "numtrace-summary"));
  simdjson::dom::parser summary_parser;
  simdjson::dom::element s;
  ASSERT_EQ(summary_parser.parse(summary_padded).get(s), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(s["a"]["undigested"]), 3u);
  EXPECT_EQ(uint64_t(s["b"]["unmeasured"]), 7u);
  EXPECT_EQ(uint64_t(s["counts"]["diverged"]), 1u);
}

RankFixture Big(int pairs, int diverge_at) {
  RankFixture f(0, "big_a.jsonl", "big_b.jsonl");
  const char* names[] = {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
                         "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn",
                         "triton_red_fused_native_layer_norm_0", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"};
  for (int i = 0; i < pairs; ++i) {
    bool div = i >= diverge_at;
    f.AddPair(names[i % 4], names[i % 4], div ? PairStatus::kDiverged : i % 7 ? PairStatus::kBitwiseEqual : PairStatus::kWithinTolerance,
              div ? 1e-4 * (1 + i - diverge_at) : i % 7 ? 0 : 3e-7);
  }
  f.Finish();
  return f;
}

TEST(HtmlReportTest, CompactAtScale) {
  RankFixture f = Big(100000, 60000);
  DiffReport report{"big_a.jsonl", "big_b.jsonl", false, {f.Diff()}};
  std::string html = HtmlReport(report, {});
  double per_row = static_cast<double>(html.size()) / 100000;
  std::printf("HTML report: %zu bytes for 100000 pairs (%.1f bytes/pair)\n", html.size(), per_row);
  // 5 MB whatever the number of rows: at 1M rows 5 bytes a row.
  EXPECT_LT(per_row, 5);
}

// A realistic report (one training step's real kernel names, diverging
// midway, a NaN later in B) for looking at: build/html_report_sample.html.
TEST(HtmlReportTest, WritesRealisticSample) {
  const std::vector<std::string> names =
      numtrace::testing::LoadKernelNames("6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt");
  RankFixture f(3, "runA/rank_3.ntrace.jsonl", "runB/rank_3.ntrace.jsonl");
  int i = 0;
  for (const std::string& name : names) {
    if (i == 400 || i == 401) f.AddOnlyB("void at::native::(anonymous namespace)::extra_copy_kernel<float>(float*)");
    if (i < 700) {
      f.AddPair(name, name, i % 11 == 3 ? PairStatus::kWithinTolerance : PairStatus::kBitwiseEqual,
                i % 11 == 3 ? 1e-7 * (1 + i % 5) : 0, i % 13 == 5 ? MatchMethod::kFuzzy : MatchMethod::kExact);
    } else if (i == 1200) {
      f.AddPair(name, name, PairStatus::kNonfiniteMismatch, 1, MatchMethod::kExact, 3);
    } else {
      bool equal = i % 3 == 0;
      f.AddPair(name, name, equal ? PairStatus::kBitwiseEqual : PairStatus::kDiverged,
                equal ? 0 : 2e-5 * (1 + (i - 700) * (i % 7)), i % 17 == 2 ? MatchMethod::kValue : MatchMethod::kExact);
    }
    ++i;
  }
  f.AddOnlyA("triton_poi_fused_add_0");
  f.Finish();
  DiffReport report{"runA", "runB", false, {f.Diff()}};
  std::string html = HtmlReport(report, {});
  std::ofstream(std::string(NUMTRACE_BINARY_DIR) + "/html_report_sample.html") << html;
  EXPECT_GT(i, 1000);
  EXPECT_NE(html.find("vectorized_elementwise_kernel"), std::string::npos);
}

// ---- in a real browser (Debian's chromium, headless) ----

TEST(HtmlReportBrowserTest, TraceStringsRenderAsTextNeverAsMarkup) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  RankFixture f = Evil();
  DiffReport report{"a<b>.jsonl", "b&c.jsonl", false, {f.Diff()}};
  std::string dom = DumpDom(HtmlReport(report, {}), "html_report_evil.html");
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "chromium produced no DOM";
  // The page's own script ran: the verdict badge and the table were filled.
  EXPECT_NE(dom.find(">diverged</span>"), std::string::npos) << dom.substr(0, 2000);
  // Escaped as text in the DOM (the serializer writes text '<' as &lt;).
  const std::string escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp; \"q\" 'k'";
  EXPECT_GE(Count(dom, escaped), 2u) << "in the first divergence card and the table";
  // Nothing injected: no element came from a name.
  EXPECT_EQ(dom.find("<script>alert"), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_EQ(Count(dom, "<script"), 3u);  // the two data blocks and the page's code
  EXPECT_NE(dom.find("a&lt;b&gt;.jsonl"), std::string::npos);
  EXPECT_NE(dom.find("extra&lt;b&gt;"), std::string::npos);
  // The first divergence card names the diverging kernel (its label).
  size_t card = dom.find("id=\"firstbody\"");
  ASSERT_NE(card, std::string::npos);
  size_t card_end = dom.find("First NaN", card);
  std::string card_text = dom.substr(card, card_end - card);
  EXPECT_NE(card_text.find("A seq 2"), std::string::npos) << card_text;
  EXPECT_NE(card_text.find("values"), std::string::npos) << card_text;
  EXPECT_NE(card_text.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << card_text;
  EXPECT_EQ(card_text.find("fine_kernel</div>"), std::string::npos) << "not an earlier pair as the divergence";
}

TEST(HtmlReportBrowserTest, SummaryReadsWithJavaScriptOff) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  RankFixture f = Evil();
  DiffReport report{"a<b>.jsonl", "b&c.jsonl", false, {f.Diff()}};
  // A policy that blocks every script, as a browser with JavaScript off
  // (chromium's --dump-dom needs scripting itself, so it cannot be turned off).
  std::string html = HtmlReport(report, {});
  html.insert(html.find("<meta charset"), "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">");
  const std::string dom = DumpDom(html, "html_report_nojs.html");
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "chromium produced no DOM";
  EXPECT_EQ(Count(dom, "class=\"trow"), 0u) << "the script did not run";
  EXPECT_NE(dom.find(">diverged</span>"), std::string::npos);
  EXPECT_NE(dom.find("<b>1</b>"), std::string::npos) << "the counts";
  const size_t card = dom.find("id=\"firstbody\"");
  ASSERT_NE(card, std::string::npos);
  const std::string card_text = dom.substr(card, dom.find("First NaN", card) - card);
  EXPECT_NE(card_text.find("A seq 2"), std::string::npos) << card_text;
  EXPECT_NE(card_text.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << card_text;
  EXPECT_NE(dom.find("needs JavaScript"), std::string::npos) << "the noscript line for the table";
}

TEST(HtmlReportBrowserTest, LargeReportRendersABoundedNumberOfRows) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  RankFixture f = Big(100000, 60000);
  DiffReport report{"big_a.jsonl", "big_b.jsonl", false, {f.Diff()}};
  std::string dom = DumpDom(HtmlReport(report, {}), "html_report_100k.html");
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "chromium produced no DOM";
  size_t rows = Count(dom, "class=\"trow");
  EXPECT_GT(rows, 10u) << "the table rendered";
  EXPECT_LT(rows, 200u) << "virtualised: never one DOM row per pair";
  EXPECT_NE(dom.find("100000 of 100000 rows"), std::string::npos);
  // Opened at the first divergence: its row (60000) is among those rendered.
  EXPECT_NE(dom.find("data-row=\"60000\""), std::string::npos);
}

TEST(HtmlReportBrowserTest, SeveralRanksGetASelectorAndOpenOnTheFirstDivergingRank) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  RankFixture r0(0, "A/rank_0", "B/rank_0");
  r0.AddPair("same_kernel", "same_kernel", PairStatus::kBitwiseEqual, 0);
  r0.Finish();
  RankFixture r1(1, "A/rank_1", "B/rank_1");
  r1.AddPair("same_kernel", "same_kernel", PairStatus::kBitwiseEqual, 0);
  r1.AddPair("rank1_bad_kernel", "rank1_bad_kernel", PairStatus::kDiverged, 0.3);
  r1.Finish();
  DiffReport report{"A", "B", true, {r0.Diff(), r1.Diff()}};
  std::string dom = DumpDom(HtmlReport(report, {}), "html_report_ranks.html");
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "chromium produced no DOM";
  EXPECT_NE(dom.find("<select id=\"rank\">"), std::string::npos);
  EXPECT_EQ(Count(dom, "<option"), 2u);
  EXPECT_NE(dom.find(">rank 1: diverged</option>"), std::string::npos);
  EXPECT_NE(dom.find("A: A/rank_1"), std::string::npos) << "opened on rank 1";
  size_t card = dom.find("id=\"firstbody\"");
  ASSERT_NE(card, std::string::npos);
  EXPECT_NE(dom.find("rank1_bad_kernel", card), std::string::npos);
}

}  // namespace
}  // namespace numtrace::analyzer
