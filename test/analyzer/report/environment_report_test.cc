// The environment in every report (analyzer/report/environment_report.h):
// the summary's `environment` section, the terminal's lines before any
// kernel, the verdict line, the first divergence card and the HTML data.
#include "analyzer/report/environment_report.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "analyzer/report/html_report.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/terminal_summary.h"
#include "test/analyzer/report/report_fixture.h"

namespace numtrace::analyzer {
namespace {

using testing::RankFixture;

// A GEMM diverges; A ran with TF32 off and deterministic algorithms on, B
// with TF32 on and non-deterministic algorithms; other keys as listed.
RankFixture TfThirtyTwo() {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  f.AddPair("elementwise", "elementwise", PairStatus::kBitwiseEqual, 0);
  f.AddPair("ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn", PairStatus::kDiverged, 3e-3);
  f.Finish();
  f.a().header.environment = {{"job.cwd", "/a"},
                              {"gpu.name", "NVIDIA H200"},
                              {"torch.deterministic_algorithms", "true"},
                              {"torch.matmul.allow_tf32", "false"},
                              {"torch.float32_matmul_precision", "highest"},
                              {"some.new_key", "x"},
                              {"env.CUBLAS_WORKSPACE_CONFIG", ":4096:8"}};
  f.b().header.environment = {{"job.cwd", "/b"},
                              {"gpu.name", "NVIDIA H200"},
                              {"torch.deterministic_algorithms", "false"},
                              {"torch.matmul.allow_tf32", "true"},
                              {"torch.float32_matmul_precision", "high"},
                              {"some.new_key", "y"},
                              {"torch.version", "2.9.0"}};
  f.result().environment = CompareEnvironments(f.a(), f.b());
  return f;
}

TEST(EnvironmentReportTest, CompareOrdersRelevantFirstInTableOrder) {
  RankFixture f = TfThirtyTwo();
  const EnvironmentDiff& d = *f.result().environment;
  std::vector<std::string> keys;
  for (const EnvDifference& e : d.differs) keys.push_back(e.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"torch.float32_matmul_precision", "torch.matmul.allow_tf32",
                                            "torch.deterministic_algorithms", "job.cwd", "some.new_key"}));
  EXPECT_EQ(d.same, 1u);
  EXPECT_EQ(d.only_a, std::vector<std::string>{"env.CUBLAS_WORKSPACE_CONFIG"});
  EXPECT_EQ(d.only_b, std::vector<std::string>{"torch.version"});
  EXPECT_EQ(VerdictEnvironmentKeys(d),
            "torch.float32_matmul_precision, torch.matmul.allow_tf32, torch.deterministic_algorithms, "
            "env.CUBLAS_WORKSPACE_CONFIG");
  EXPECT_EQ(VerdictEnvironmentKeys(d, 2), "torch.float32_matmul_precision, torch.matmul.allow_tf32 and 2 more");
}

TEST(EnvironmentReportTest, SummaryHasTheSectionWithEffects) {
  RankFixture f = TfThirtyTwo();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  const std::string json = JsonSummary(report);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element env = doc["environment"];
  simdjson::dom::array differs = env["differs"];
  ASSERT_EQ(differs.size(), 5u);
  simdjson::dom::element tf32 = differs.at(1);
  EXPECT_EQ(std::string_view(tf32["key"]), "torch.matmul.allow_tf32");
  EXPECT_EQ(std::string_view(tf32["a"]), "false");
  EXPECT_EQ(std::string_view(tf32["b"]), "true");
  EXPECT_NE(std::string_view(tf32["effect"]).find("10 mantissa bits"), std::string_view::npos);
  EXPECT_TRUE(bool(tf32["relevant"]));
  EXPECT_FALSE(bool(differs.at(4)["relevant"]));  // a key the table does not know
  EXPECT_EQ(std::string_view(differs.at(4)["effect"]), "");
  EXPECT_EQ(std::string_view(env["only_a"].at(0)), "env.CUBLAS_WORKSPACE_CONFIG");
  EXPECT_EQ(uint64_t(env["same"]), 1u);
}

TEST(EnvironmentReportTest, TerminalShowsItBeforeAnyKernelAndInTheVerdictLine) {
  RankFixture f = TfThirtyTwo();
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  const std::string s = TerminalSummary(report, {});
  const std::string verdict = s.substr(0, s.find('\n'));
  EXPECT_NE(verdict.find("diverged"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("settings differ: torch.float32_matmul_precision, torch.matmul.allow_tf32"),
            std::string::npos)
      << verdict;
  const size_t env = s.find("environment: 5 differ, 1 same, 1 only in A, 1 only in B");
  const size_t tf32 = s.find("torch.matmul.allow_tf32: A 'false', B 'true' - TF32: fp32 matmuls round inputs");
  const size_t det = s.find("torch.deterministic_algorithms: A 'true', B 'false' - non-deterministic");
  const size_t first = s.find("first divergence");
  ASSERT_NE(env, std::string::npos) << s;
  ASSERT_NE(tf32, std::string::npos) << s;
  ASSERT_NE(det, std::string::npos) << s;
  ASSERT_NE(first, std::string::npos) << s;
  EXPECT_LT(tf32, first);
  // The card: the GEMM is one TF32 changes; non-deterministic algorithms
  // (atomics) are not named for it.
  const std::string card = s.substr(first);
  EXPECT_NE(card.find("affected by torch.matmul.allow_tf32 (A 'false', B 'true')"), std::string::npos) << card;
  EXPECT_EQ(card.find("affected by torch.deterministic_algorithms"), std::string::npos) << card;
}

TEST(EnvironmentReportTest, NoRelevantDifferenceNoVerdictWordsAndSameOnlySaysSo) {
  RankFixture f = TfThirtyTwo();
  f.b().header.environment = f.a().header.environment;
  f.result().environment = CompareEnvironments(f.a(), f.b());
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  const std::string s = TerminalSummary(report, {});
  EXPECT_EQ(s.find("settings differ"), std::string::npos) << s;
  EXPECT_NE(s.find("environment: 7 keys, all the same"), std::string::npos) << s;
  EXPECT_EQ(s.find("affected by"), std::string::npos) << s;
}

TEST(EnvironmentReportTest, DebugModeLogSaysSoOnce) {
  RankFixture f = TfThirtyTwo();
  f.a().header.environment.clear();
  f.b().header.environment.clear();
  f.a().records_environment = false;  // a DebugMode log
  f.a().kind = "DebugMode log";
  f.result().environment = CompareEnvironments(f.a(), f.b());
  EXPECT_FALSE(f.result().environment.has_value());
  DiffReport report{"a.log", "b.jsonl", false, {f.Diff()}};
  const std::string s = TerminalSummary(report, {});
  const size_t at = s.find("not compared: a DebugMode log records no environment");
  ASSERT_NE(at, std::string::npos) << s;
  EXPECT_EQ(s.find("not compared: a DebugMode log records no environment", at + 1), std::string::npos) << s;
  EXPECT_EQ(JsonSummary(report).find("\"environment\""), std::string::npos);
}

TEST(EnvironmentReportTest, HtmlCarriesTheSectionEscaped) {
  RankFixture f = TfThirtyTwo();
  f.b().header.environment.emplace_back("env.NCCL_ALGO", "<script>alert(1)</script>");
  f.result().environment = CompareEnvironments(f.a(), f.b());
  DiffReport report{"a.jsonl", "b.jsonl", false, {f.Diff()}};
  const std::string html = HtmlReport(report, {});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("\"environment\":{\"differs\":[{\"key\":\"torch.float32_matmul_precision\""),
            std::string::npos);
  // The card's "affected by" line and the verdict's settings are summary markup now.
  EXPECT_NE(html.find("affected by torch.float32_matmul_precision (A '"), std::string::npos);
  EXPECT_NE(html.find("{\"key\":\"torch.matmul.allow_tf32\",\"a\":\"false\",\"b\":\"true\",\"effect\""), std::string::npos);
  EXPECT_NE(html.find("id=\"envcard\""), std::string::npos);
  EXPECT_NE(html.find("settings differ: torch.float32_matmul_precision"), std::string::npos);
}

}  // namespace
}  // namespace numtrace::analyzer
