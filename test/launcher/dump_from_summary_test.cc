// `numtrace run --dump-first-divergence SUMMARY --side a|b`: the summary's
// first divergence becomes --dump seq:N and --dump-expect NAME@ for that
// side, which reach the job as NUMTRACE_DUMP / NUMTRACE_DUMP_EXPECT.
#include "launcher/dump_from_summary.h"

#include <gtest/gtest.h>

#include "launcher/run_environment.h"
#include "test/util/scratch_dir.h"

namespace numtrace::launcher {
namespace {

namespace fs = std::filesystem;

fs::path WriteSummary(const std::string& first) {
  fs::path dir = numtrace::testing::FreshTestDir("dump_from_summary");
  numtrace::testing::WriteFileText(
      dir / "summary.json",
      "{\"format\":\"numtrace-diff-summary\",\"version\":1,\"verdict\":\"diverged\",\"first_divergence\":" + first +
          "}");
  return dir / "summary.json";
}

TEST(DumpFromSummaryTest, EachSideGetsItsSeqAndKernelName) {
  const fs::path s = WriteSummary(
      "{\"a_seq\":3990,\"b_seq\":3991,\"a_name\":\"gemm_a\",\"b_name\":\"gemm_b\",\"kind\":\"values\"}");
  for (const auto& [side, seq, expect] : {std::tuple{"a", "seq:3990", "gemm_a@"}, {"b", "seq:3991", "gemm_b@"}}) {
    RunOptions o;
    o.dump_first_divergence = s.string();
    o.side = side;
    ASSERT_TRUE(ResolveDumpFromSummary(&o).ok()) << side;
    EXPECT_EQ(o.Get("NUMTRACE_DUMP"), seq);
    EXPECT_EQ(o.Get("NUMTRACE_DUMP_EXPECT"), expect);
    o.command = {"sh", "-c", "true"};
    std::vector<std::string> warnings;
    Environment env = RunEnvironment(o, "/runs/d", Environment(), LayoutFromBinDir("/opt/nt/bin", Environment()), &warnings);
    EXPECT_EQ(env.Get("NUMTRACE_DUMP"), seq);
    EXPECT_EQ(env.Get("NUMTRACE_DUMP_EXPECT"), expect);
  }
}

TEST(DumpFromSummaryTest, BadUsageNamesWhatIsWrong) {
  const fs::path s = WriteSummary("{\"a_seq\":1,\"b_seq\":1,\"a_name\":\"k\",\"b_name\":\"k\"}");
  const fs::path none = WriteSummary("null");
  auto why = [](RunOptions o) { return std::string(ResolveDumpFromSummary(&o).message()); };
  RunOptions o;
  EXPECT_TRUE(ResolveDumpFromSummary(&o).ok());  // nothing asked
  o.side = "a";
  EXPECT_NE(why(o).find("--side needs --dump-first-divergence"), std::string::npos);
  o.dump_first_divergence = s.string();
  o.side = "";
  EXPECT_NE(why(o).find("needs --side a or --side b"), std::string::npos);
  o.side = "a";
  o.Set("NUMTRACE_DUMP", "seq:2");
  EXPECT_NE(why(o).find("exclude each other"), std::string::npos);
  o.settings.erase("NUMTRACE_DUMP");
  o.dump_first_divergence = none.string();
  EXPECT_NE(why(o).find("no first divergence"), std::string::npos);
  o.dump_first_divergence = "/nonexistent/summary.json";
  EXPECT_FALSE(why(o).empty());
}

}  // namespace
}  // namespace numtrace::launcher
