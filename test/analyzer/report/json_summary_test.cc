#include "analyzer/report/json_summary.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "analyzer/report/html_report.h"
#include "analyzer/report/terminal_summary.h"
#include "test/analyzer/report/report_fixture.h"

namespace numtrace::analyzer {
namespace {

using testing::RankFixture;

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
  auto doc = parser.parse(json);
  EXPECT_EQ(doc.error(), simdjson::SUCCESS) << json;
  return doc.value();
}

std::string Str(simdjson::dom::element e) { return std::string(std::string_view(e)); }

TEST(JsonSummaryTest, SingleFileDivergedEveryField) {
  RankFixture f(0, "runA/rank_0.ntrace.jsonl", "runB/rank_0.ntrace.jsonl");
  f.AddPair("gemm", "gemm", PairStatus::kBitwiseEqual, 0);
  f.AddPair("add<\"x\">", "add<\"x\">", PairStatus::kWithinTolerance, 1e-7, MatchMethod::kFuzzy);
  f.AddOnlyA("extra_a");
  f.AddPair("softmax", "softmax_v2", PairStatus::kDiverged, 3.1e-3, MatchMethod::kValue);
  f.AddPair("norm", "norm", PairStatus::kNonfiniteMismatch, 1.0, MatchMethod::kOverride, 2);
  f.AddOnlyB("extra_b");
  f.a().truncated = true;
  f.result().tolerance = {1e-4, 1e-8};
  f.Finish();
  DiffReport report{"runA/rank_0.ntrace.jsonl", "runB/rank_0.ntrace.jsonl", false, {f.Diff()}};

  std::string json = JsonSummary(report);
  ASSERT_EQ(json.back(), '\n');
  simdjson::dom::parser parser;
  auto doc = Parse(parser, json);
  EXPECT_EQ(Str(doc["format"]), "numtrace-diff-summary");
  EXPECT_EQ(int64_t(doc["version"]), 1);
  EXPECT_EQ(Str(doc["a"]["path"]), "runA/rank_0.ntrace.jsonl");
  EXPECT_EQ(Str(doc["a"]["label"]), "A");
  EXPECT_EQ(uint64_t(doc["a"]["kernels"]), 5u);
  EXPECT_TRUE(bool(doc["a"]["truncated"]));
  EXPECT_EQ(Str(doc["b"]["path"]), "runB/rank_0.ntrace.jsonl");
  EXPECT_EQ(uint64_t(doc["b"]["kernels"]), 5u);
  EXPECT_FALSE(bool(doc["b"]["truncated"]));
  EXPECT_DOUBLE_EQ(double(doc["tolerance"]["rtol"]), 1e-4);
  EXPECT_DOUBLE_EQ(double(doc["tolerance"]["atol"]), 1e-8);
  EXPECT_EQ(Str(doc["verdict"]), "diverged");
  auto c = doc["counts"];
  EXPECT_EQ(uint64_t(c["pairs"]), 4u);
  EXPECT_EQ(uint64_t(c["bitwise_equal"]), 1u);
  EXPECT_EQ(uint64_t(c["within_tolerance"]), 1u);
  EXPECT_EQ(uint64_t(c["diverged"]), 2u);
  EXPECT_EQ(uint64_t(c["only_a"]), 1u);
  EXPECT_EQ(uint64_t(c["only_b"]), 1u);
  auto m = doc["match_methods"];
  EXPECT_EQ(uint64_t(m["override"]), 1u);
  EXPECT_EQ(uint64_t(m["exact"]), 1u);
  EXPECT_EQ(uint64_t(m["fuzzy"]), 1u);
  EXPECT_EQ(uint64_t(m["value"]), 1u);
  auto fd = doc["first_divergence"];
  EXPECT_EQ(uint64_t(fd["a_seq"]), 3u);  // after the only-A kernel
  EXPECT_EQ(uint64_t(fd["b_seq"]), 2u);
  EXPECT_EQ(Str(fd["a_name"]), "softmax");
  EXPECT_EQ(Str(fd["b_name"]), "softmax_v2");
  EXPECT_EQ(int64_t(fd["a_arg"]), 1);
  EXPECT_EQ(int64_t(fd["b_arg"]), 1);
  EXPECT_DOUBLE_EQ(double(fd["rel_diff"]), 3.1e-3);
  EXPECT_EQ(Str(fd["kind"]), "values");
  EXPECT_TRUE(fd["rank"].error() == simdjson::NO_SUCH_FIELD);  // only for directories
  EXPECT_TRUE(doc["first_nonfinite"]["a"].is_null());
  EXPECT_EQ(uint64_t(doc["first_nonfinite"]["b"]["seq"]), 3u);
  EXPECT_EQ(Str(doc["first_nonfinite"]["b"]["name"]), "norm");
  EXPECT_TRUE(doc["ranks"].error() == simdjson::NO_SUCH_FIELD);
}

TEST(JsonSummaryTest, IdenticalHasNullDivergence) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  f.Finish();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  EXPECT_EQ(Str(doc["verdict"]), "identical");
  EXPECT_TRUE(doc["first_divergence"].is_null());
  EXPECT_TRUE(doc["first_nonfinite"]["a"].is_null());
  EXPECT_TRUE(doc["first_nonfinite"]["b"].is_null());
}

TEST(JsonSummaryTest, LayoutDivergenceWithoutBufferHasNullArgs) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("k", "k", PairStatus::kLayoutMismatch, 0);
  f.result().verdicts[0].a_buffer = -1;
  f.result().verdicts[0].b_buffer = -1;
  f.Finish();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  EXPECT_EQ(Str(doc["first_divergence"]["kind"]), "layout");
  EXPECT_TRUE(doc["first_divergence"]["a_arg"].is_null());
  EXPECT_TRUE(doc["first_divergence"]["b_arg"].is_null());
}

TEST(JsonSummaryTest, DirectoriesRollUpRanks) {
  RankFixture r0(0, "A/rank_0.ntrace.jsonl", "B/rank_0.ntrace.jsonl");
  r0.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  r0.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  r0.AddPair("late", "late", PairStatus::kDiverged, 0.5);  // launch 1002
  r0.Finish();
  RankFixture r1(1, "A/rank_1.ntrace.jsonl", "B/rank_1.ntrace.jsonl");
  r1.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  r1.AddPair("early", "early", PairStatus::kDiverged, 0.01, MatchMethod::kExact, 1);  // launch 1001
  r1.AddOnlyB("x");
  r1.Finish();
  DiffReport report{"A", "B", true, {r0.Diff(), r1.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  EXPECT_EQ(Str(doc["a"]["path"]), "A");
  EXPECT_EQ(uint64_t(doc["a"]["kernels"]), 5u);
  EXPECT_EQ(uint64_t(doc["b"]["kernels"]), 6u);
  EXPECT_EQ(Str(doc["verdict"]), "diverged");
  EXPECT_EQ(uint64_t(doc["counts"]["pairs"]), 5u);
  EXPECT_EQ(uint64_t(doc["counts"]["diverged"]), 2u);
  EXPECT_EQ(uint64_t(doc["counts"]["only_b"]), 1u);
  EXPECT_EQ(uint64_t(doc["match_methods"]["exact"]), 5u);
  EXPECT_EQ(int64_t(doc["first_divergence"]["rank"]), 1);
  EXPECT_EQ(Str(doc["first_divergence"]["a_name"]), "early");
  EXPECT_EQ(int64_t(doc["first_nonfinite"]["b"]["rank"]), 1);
  EXPECT_EQ(uint64_t(doc["first_nonfinite"]["b"]["seq"]), 1u);
  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  auto first = ranks.at(0).value();
  EXPECT_EQ(int64_t(first["rank"]), 0);
  EXPECT_EQ(Str(first["format"]), "numtrace-diff-summary");
  EXPECT_EQ(Str(first["a"]["path"]), "A/rank_0.ntrace.jsonl");
  EXPECT_EQ(uint64_t(first["counts"]["pairs"]), 3u);
  EXPECT_EQ(Str(first["first_divergence"]["a_name"]), "late");
  EXPECT_TRUE(first["first_divergence"]["rank"].error() == simdjson::NO_SUCH_FIELD);
  auto second = ranks.at(1).value();
  EXPECT_EQ(int64_t(second["rank"]), 1);
  EXPECT_EQ(Str(second["verdict"]), "diverged");
}

// The terminal summary, the HTML report and the JSON summary take the
// roll-up over ranks from one RollUp: two ranks diverging at the same launch
// (a tie: the lower rank) and then rank 1 earlier are named alike by all three.
TEST(JsonSummaryTest, EveryReportNamesTheSameRankFirst) {
  for (const bool rank1_earlier : {false, true}) {
    RankFixture r0(0, "A/rank_0.ntrace.jsonl", "B/rank_0.ntrace.jsonl");
    r0.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
    r0.AddPair("zero", "zero", PairStatus::kDiverged, 0.5);  // launch 1001
    r0.Finish();
    RankFixture r1(1, "A/rank_1.ntrace.jsonl", "B/rank_1.ntrace.jsonl");
    if (!rank1_earlier) r1.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
    r1.AddPair("one", "one", PairStatus::kDiverged, 0.5);  // launch 1001, or 1000
    r1.Finish();
    DiffReport report{"A", "B", true, {r0.Diff(), r1.Diff()}};
    const int first = rank1_earlier ? 1 : 0;
    EXPECT_EQ(RollUpRanks(report).first_divergence_rank, first);
    simdjson::dom::parser parser;
    auto doc = Parse(parser, JsonSummary(report));
    EXPECT_EQ(int64_t(doc["first_divergence"]["rank"]), first);
    EXPECT_EQ(int64_t(doc["origins"]["first"]["rank"]), first);
    const std::string terminal = TerminalSummary(report, {});
    EXPECT_NE(terminal.find("rank " + std::to_string(first) + " (diverges first)"), std::string::npos) << terminal;
    EXPECT_EQ(terminal.find("rank " + std::to_string(1 - first) + " (diverges first)"), std::string::npos);
    EXPECT_NE(HtmlReport(report, {}).find("<option value=\"" + std::to_string(first) + "\" selected>"),
              std::string::npos);
  }
}

TEST(JsonSummaryTest, NamesWithQuotesAndControlBytesStayValidJson) {
  RankFixture f(0, "a\"q.jsonl", "b\\.jsonl");
  f.AddPair("k\"<&>\n\x01", "k", PairStatus::kDiverged, 1);
  f.Finish();
  DiffReport report{"a\"q.jsonl", "b\\.jsonl", false, {f.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  EXPECT_EQ(Str(doc["first_divergence"]["a_name"]), "k\"<&>\n\x01");
  EXPECT_EQ(Str(doc["a"]["path"]), "a\"q.jsonl");
}

TEST(JsonSummaryTest, ScoreCauseAndOrigins) {
  // Row 1 is an origin within tolerance; rows 2 and 3 read what it wrote
  // (their inputs differ) and diverge; row 4 is a diverged origin.
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddFlowPair("k", PairStatus::kBitwiseEqual, 0, 0x100);
  f.AddFlowPair("noise", PairStatus::kWithinTolerance, 2e-6, 0x200);
  f.AddFlowPair("heir1", PairStatus::kDiverged, 1e-3, 0x300, 0x200, 1, 2);
  f.AddFlowPair("heir2", PairStatus::kDiverged, 1e-4, 0x400, 0x300, 3, 4);
  f.AddFlowPair("bug", PairStatus::kDiverged, 0.5, 0x500);
  f.Finish();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  auto fd = doc["first_divergence"];
  EXPECT_EQ(Str(fd["a_name"]), "heir1");
  EXPECT_DOUBLE_EQ(double(fd["score"]), 1e-3 / 1e-5);
  EXPECT_EQ(Str(fd["cause"]), "inherited");
  EXPECT_EQ(Str(fd["a_dtype"]), "f32");
  EXPECT_EQ(Str(fd["b_dtype"]), "f32");
  auto o = doc["origins"];
  EXPECT_EQ(uint64_t(o["count"]), 2u);
  EXPECT_EQ(uint64_t(o["diverged"]), 1u);
  EXPECT_EQ(Str(o["first"]["a_name"]), "noise");
  EXPECT_EQ(Str(o["first"]["status"]), "within_tolerance");
  EXPECT_EQ(uint64_t(o["first"]["descendants"]), 2u);
  simdjson::dom::array top = o["top"];
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(Str(top.at(0)["a_name"]), "bug");  // by score
  EXPECT_EQ(Str(top.at(0)["status"]), "diverged");
  EXPECT_EQ(uint64_t(top.at(0)["descendants"]), 0u);
  EXPECT_EQ(uint64_t(top.at(0)["a_seq"]), 4u);
  EXPECT_TRUE(bool(doc["complete"]));
}

TEST(JsonSummaryTest, CompleteDroppedUnmeasuredAndCounters) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  f.Finish();
  FooterRecord footer;
  footer.dropped = 3;
  footer.unmeasured = 5;
  footer.counters = {{"launches_seen", 120}, {"no_layout", 2}};
  f.a().footer = footer;
  NoteRecord note;
  note.kind = "unmeasured";
  note.name = "nccl_kernel";
  note.count = 4;
  f.b().notes = {note, note};  // no footer in B: the notes' counts add up
  f.b().truncated = true;
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  EXPECT_FALSE(bool(doc["complete"]));
  EXPECT_EQ(uint64_t(doc["a"]["dropped"]), 3u);
  EXPECT_EQ(uint64_t(doc["a"]["unmeasured"]), 5u);
  EXPECT_EQ(uint64_t(doc["a"]["counters"]["launches_seen"]), 120u);
  EXPECT_EQ(uint64_t(doc["a"]["counters"]["no_layout"]), 2u);
  EXPECT_EQ(uint64_t(doc["b"]["unmeasured"]), 8u);
  EXPECT_EQ(uint64_t(doc["b"]["dropped"]), 0u);
  EXPECT_TRUE(bool(doc["b"]["truncated"]));
  EXPECT_EQ(IncompleteReason(report),
            "A (a.jsonl): records dropped (3), 5 kernels ran unmeasured; "
            "B (b.jsonl): cut short (no footer), 8 kernels ran unmeasured");
  // Complete when nothing is missing.
  f.a().footer.reset();
  f.b().notes.clear();
  f.b().truncated = false;
  EXPECT_TRUE(bool(Parse(parser, JsonSummary(report))["complete"]));
  EXPECT_EQ(IncompleteReason(report), "");
}

// The directory roll-up's `complete` sees every reason a rank is incomplete:
// a footer counting more kernels than were read, and undigested launches.
TEST(JsonSummaryTest, RollUpCompleteSeesMissingRecordsAndUndigestedLaunches) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("k", "k", PairStatus::kBitwiseEqual, 0);
  f.Finish();
  FooterRecord footer;
  footer.kernels = 5;  // 1 record read
  f.a().footer = footer;
  DiffReport report{"runA", "runB", /*per_rank=*/true, {f.Diff()}};
  simdjson::dom::parser parser;
  auto doc = Parse(parser, JsonSummary(report));
  EXPECT_FALSE(bool(doc["complete"]));
  EXPECT_FALSE(bool(doc["ranks"].at(0)["complete"]));
  f.a().footer.reset();
  EXPECT_TRUE(bool(Parse(parser, JsonSummary(report))["complete"]));
  f.b().digests.push_back(StepDigest{3, 2, 0x77, std::nullopt, /*lost=*/2, 0});
  doc = Parse(parser, JsonSummary(report));
  EXPECT_FALSE(bool(doc["complete"]));
  EXPECT_EQ(uint64_t(doc["b"]["undigested"]), 2u);
  EXPECT_EQ(IncompleteReason(report), "B (b.jsonl): 2 launches not digested");
}

}  // namespace
}  // namespace numtrace::analyzer
