// File: test/analyzer/cli/nothing_compared_test.cc
//
// No clean bill on nothing (issue 16): zero compared pairs is exit 2 with
// one line saying why, and a trace whose footer counts more kernels than it
// holds records is incomplete (--strict exits 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "analyzer/cli/diff_command.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using numtrace::testing::ReadFileText;
using numtrace::testing::WriteFileText;

const std::string kExample = std::string(NUMTRACE_SOURCE_DIR) + "/examples/basic/run_a/rank_0.ntrace.jsonl";

struct Result {
  int code;
  std::string out, err;
};

Result Diff(const std::string& a, const std::string& b, bool strict) {
  DiffCommandOptions opt;
  opt.a = a;
  opt.b = b;
  opt.strict = strict;
  opt.color = ColorMode::kNever;
  std::ostringstream out, err;
  const int code = RunDiffCommand(opt, out, err, false);
  return {code, out.str(), err.str()};
}

// The example's header and footer only: a capture without kernel records.
std::string EmptyCapture() {
  const std::string text = ReadFileText(kExample);
  const std::string header = text.substr(0, text.find('\n') + 1);
  return header + "{\"type\":\"footer\",\"kernels\":0,\"launches\":0,\"dropped\":0,\"unmeasured\":0,"
                  "\"status\":\"complete\",\"end_time\":\"2026-11-29T11:30:00Z\"}\n";
}

TEST(NothingCompared, EmptyCapturesAreNoVerdict) {
  const fs::path dir = numtrace::testing::FreshTestDir("nothing_compared");
  WriteFileText(dir / "a.ntrace.jsonl", EmptyCapture());
  WriteFileText(dir / "b.ntrace.jsonl", EmptyCapture());
  Result r = Diff((dir / "a.ntrace.jsonl").string(), (dir / "b.ntrace.jsonl").string(), false);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nothing was compared"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("holds no kernel records"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out.find("identical"), std::string::npos) << r.out;
}

TEST(NothingCompared, FooterCountingMoreKernelsThanRecordsIsIncomplete) {
  std::string text = ReadFileText(kExample);
  const std::string footer = "{\"type\":\"footer\",\"kernels\":300,";
  const size_t at = text.find(footer);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, footer.size(), "{\"type\":\"footer\",\"kernels\":305,");
  const fs::path dir = numtrace::testing::FreshTestDir("footer_counts_more");
  WriteFileText(dir / "a.ntrace.jsonl", text);
  // Against itself: every pair bitwise equal, yet 5 records are missing.
  Result r = Diff((dir / "a.ntrace.jsonl").string(), (dir / "a.ntrace.jsonl").string(), true);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("footer counts 305 kernels, 300 records read"), std::string::npos) << r.err;
  r = Diff((dir / "a.ntrace.jsonl").string(), (dir / "a.ntrace.jsonl").string(), false);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.err.find("incomplete comparison"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace numtrace::analyzer
