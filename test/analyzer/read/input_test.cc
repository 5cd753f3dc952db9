#include "analyzer/read/input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test/analyzer/read/debugmode_log_text.h"
#include "test/analyzer/read/trace_text.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh scratch directory under the build tree for one test.
std::string ScratchDir(const std::string& name) {
  fs::path dir = fs::path(NUMTRACE_BINARY_DIR) / "read_input_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void Write(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

TEST(InputTest, DetectsFormatByContent) {
  EXPECT_EQ(ImporterForContent("\n  {\"type\":\"header\"}"), FindImporter("numtrace"));
  EXPECT_EQ(ImporterForContent("Total captured activations: 3\n"), FindImporter("debugmode-log"));
  EXPECT_EQ(ImporterForContent("[layers.0/op_0_mm]\n"), FindImporter("debugmode-log"));
  EXPECT_EQ(ImporterForContent("hello"), nullptr);
  EXPECT_EQ(ImporterForContent(""), nullptr);
}

TEST(InputTest, ReadAnyTraceDispatchesOnContentNotName) {
  std::string dir = ScratchDir("any");
  // Names deliberately swapped: detection must look at the bytes.
  Write(dir + "/a.log", testing::TraceText(testing::MakeKernels(2)));
  Write(dir + "/b.jsonl", testing::DebugModeLogText({testing::OpBlock{}}));
  Write(dir + "/c.txt", "something else\n");
  absl::StatusOr<Trace> a = ReadTrace(dir + "/a.log");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->kind, "numtrace trace");
  EXPECT_EQ(a->kernels.size(), 2u);
  absl::StatusOr<Trace> b = ReadTrace(dir + "/b.jsonl");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->kind, "DebugMode log");
  absl::StatusOr<Trace> c = ReadTrace(dir + "/c.txt");
  EXPECT_EQ(c.status().message(), dir + "/c.txt: not a trace numtrace-diff reads (DebugMode JSON log, numtrace trace, DebugMode log)");
}

TEST(InputTest, ReadsTheCheckedInTorchtitanLog) {
  absl::StatusOr<Trace> t =
      ReadTrace(std::string(NUMTRACE_TEST_DATA_DIR) + "/debugmode/rank_0_activations.log");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels.size(), 4u);
  EXPECT_FALSE(t->truncated);
  EXPECT_EQ(t->Demangled(t->kernels[2]), "_scaled_dot_product_flash_attention");
  auto sdpa = t->BuffersOf(t->kernels[2]);
  ASSERT_EQ(sdpa.size(), 2u + 3u);  // two outputs, three inputs
  EXPECT_EQ(sdpa[0].stats.n, 2u * 8 * 64 * 32);
  EXPECT_EQ(sdpa[1].stats.n, 2u * 8 * 64);
  EXPECT_EQ(sdpa[1].stats.nan, 1u);  // its L1 ("hash") was nan
  // The output of wq is the input of the attention op: same "hash".
  EXPECT_EQ(t->BuffersOf(t->kernels[1])[0].stats.hash, sdpa[2].stats.hash);
}

TEST(InputTest, PairsTwoFiles) {
  absl::StatusOr<std::vector<RankPair>> pairs = PairInputs(
      std::string(NUMTRACE_TEST_DATA_DIR) + "/debugmode/rank_0_activations.log",
      std::string(NUMTRACE_TEST_DATA_DIR) + "/debugmode/rank_0_activations.log");
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 1u);
  EXPECT_EQ((*pairs)[0].rank, 0);
}

TEST(InputTest, PairsDirectoriesByRank) {
  std::string a = ScratchDir("runA"), b = ScratchDir("runB");
  std::string big = testing::TraceText(testing::MakeKernels(4));
  Write(a + "/rank_0.pid4242.ntrace.jsonl", big);
  Write(a + "/rank_1.ntrace.jsonl", big);
  Write(a + "/rank_10.ntrace.jsonl", big);
  Write(a + "/notes.txt", "not a trace");
  Write(a + "/rank_2.ntrace.jsonl.tmp", big);
  Write(b + "/rank_0.pid99.ntrace.jsonl", big);
  Write(b + "/rank_1.ntrace.jsonl", big);
  Write(b + "/rank_10_activations.log", testing::DebugModeLogText({testing::OpBlock{}}));
  absl::StatusOr<std::vector<RankPair>> pairs = PairInputs(a, b);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 3u);
  EXPECT_EQ((*pairs)[0].rank, 0);
  EXPECT_EQ((*pairs)[0].path_a, a + "/rank_0.pid4242.ntrace.jsonl");
  EXPECT_EQ((*pairs)[0].path_b, b + "/rank_0.pid99.ntrace.jsonl");
  EXPECT_EQ((*pairs)[1].rank, 1);
  EXPECT_EQ((*pairs)[2].rank, 10);
  EXPECT_EQ((*pairs)[2].path_b, b + "/rank_10_activations.log");
}

TEST(InputTest, TwoTracesOfOneRankAreNeverChosenBySize) {
  // Two processes wrote rank 0 into runA; the larger file is not
  // necessarily the one to compare (before: the larger was taken silently).
  std::string a = ScratchDir("twoA"), b = ScratchDir("twoB");
  std::string small = testing::TraceText(testing::MakeKernels(1));
  std::string big = testing::TraceText(testing::MakeKernels(4));
  Write(a + "/rank_0.ntrace.jsonl", small);
  Write(a + "/rank_0.pid4242.ntrace.jsonl", big);
  Write(b + "/rank_0.pid99.ntrace.jsonl", big);
  absl::StatusOr<std::vector<RankPair>> pairs = PairInputs(a, b);
  ASSERT_FALSE(pairs.ok());
  const std::string m(pairs.status().message());
  EXPECT_THAT(m, HasSubstr("rank 0 has several traces: " + a +
                           " holds 2 (rank_0.ntrace.jsonl, rank_0.pid4242.ntrace.jsonl)"));
  EXPECT_THAT(m, HasSubstr("give the two files to compare, e.g. numtrace-diff " + a +
                           "/rank_0.pid4242.ntrace.jsonl " + b + "/rank_0.pid99.ntrace.jsonl"));
  EXPECT_EQ(m.find('\n'), std::string::npos);
  // A name both directories share is no answer either (issue 15: a stale
  // rank_0.ntrace.jsonl of an earlier run paired with the other run's and
  // said identical): refused with both names, whatever the other side holds.
  Write(b + "/rank_0.ntrace.jsonl", small);
  pairs = PairInputs(a, b);
  ASSERT_FALSE(pairs.ok());
  EXPECT_THAT(std::string(pairs.status().message()),
              HasSubstr("holds 2 (rank_0.ntrace.jsonl, rank_0.pid4242.ntrace.jsonl)"));
  std::filesystem::remove(b + "/rank_0.pid99.ntrace.jsonl");
  pairs = PairInputs(a, b);  // b: one file now; a still two
  ASSERT_FALSE(pairs.ok());
  EXPECT_THAT(std::string(pairs.status().message()),
              HasSubstr("holds 2 (rank_0.ntrace.jsonl, rank_0.pid4242.ntrace.jsonl)"));
}

TEST(InputTest, PairingErrorsNameWhatIsWrong) {
  std::string a = ScratchDir("errA"), b = ScratchDir("errB"), empty = ScratchDir("empty");
  std::string text = testing::TraceText(testing::MakeKernels(1));
  Write(a + "/rank_0.ntrace.jsonl", text);
  Write(a + "/rank_3.ntrace.jsonl", text);
  Write(b + "/rank_0.ntrace.jsonl", text);
  auto r = PairInputs(a, b);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "rank 3 has a trace in " + a + " (" + a + "/rank_3.ntrace.jsonl) but none in " + b);
  r = PairInputs(b, a);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("rank 3 has a trace in " + a));
  r = PairInputs(empty, b);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(empty + ": no trace files"));
  r = PairInputs(a, b + "/rank_0.ntrace.jsonl");
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(a + " is a directory but "));
  r = PairInputs(a, "/nonexistent/dir");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("/nonexistent/dir"));
}

}  // namespace
}  // namespace numtrace::analyzer
