#include "analyzer/cli/diff_command.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/format/digest.h"
#include "common/format/jsonl_writer.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using numtrace::testing::FreshTestDir;
using numtrace::testing::ReadFileText;

// A trace of kernels gemm/add/softmax cycling, one f32 output buffer each
// whose stats are derived from `values[i]`; nan_at gives that kernel a NaN.
void WriteTrace(const fs::path& path, const std::vector<double>& values, int64_t rank = 0,
                int nan_at = -1, bool footer = true) {
  std::string out;
  TraceHeader h;
  h.producer = "test";
  RunInfo run;
  run.label = path.stem().string();
  run.rank = rank;
  h.run = run;
  AppendJsonLine(h, &out);
  const char* names[] = {"gemm", "add<float>", "softmax"};
  for (size_t i = 0; i < values.size(); ++i) {
    KernelRecord k;
    k.seq = i;
    k.launch = 100 + i;
    k.name = names[i % 3];
    k.stream = 7;
    BufferRecord b;
    b.arg = 2;
    b.addr = 0x1000;
    b.bytes = 16;
    b.dtype = DType::kF32;
    b.role = Role::kOut;
    b.stats.n = 4;
    b.stats.nan = static_cast<int>(i) == nan_at ? 1 : 0;
    b.stats.has_range = true;
    b.stats.min = 0;
    b.stats.max = values[i];
    b.stats.sum = values[i];
    b.stats.l1 = values[i];
    b.stats.l2 = values[i];
    b.stats.hash = static_cast<uint64_t>(values[i] * 1e9) + b.stats.nan;
    k.buffers.push_back(b);
    AppendJsonLine(k, &out);
  }
  if (footer) {
    FooterRecord f;
    f.kernels = f.launches = values.size();
    AppendJsonLine(f, &out);
  }
  std::ofstream(path, std::ios::binary) << out;
}

class DiffCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("cli");
    WriteTrace(dir_ / "a.jsonl", {1, 2, 3, 4, 5, 6});
    WriteTrace(dir_ / "same.jsonl", {1, 2, 3, 4, 5, 6});
    WriteTrace(dir_ / "close.jsonl", {1, 2, 3, 4.00002, 5, 6});
    WriteTrace(dir_ / "b.jsonl", {1, 2, 3, 4.5, 5, 6}, 0, 5);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "numtrace-diff");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    out_.str("");
    err_.str("");
    return DiffMain(static_cast<int>(argv.size()), argv.data(), out_, err_, false);
  }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  // Exactly one line on stderr.
  void ExpectOneErrorLine(const std::string& must_contain) {
    std::string e = err_.str();
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    EXPECT_NE(e.find(must_contain), std::string::npos) << e;
  }

  fs::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(DiffCommandTest, IdenticalExitsZero) {
  EXPECT_EQ(Run({P("a.jsonl"), P("same.jsonl")}), kExitOk) << err_.str();
  EXPECT_NE(out_.str().find("identical"), std::string::npos) << out_.str();
  EXPECT_TRUE(err_.str().empty());
}

TEST_F(DiffCommandTest, WithinToleranceExitsZeroAndLooseToleranceToo) {
  EXPECT_EQ(Run({P("a.jsonl"), P("close.jsonl"), "--json", P("s.json")}), kExitOk) << err_.str();
  simdjson::dom::parser parser;
  auto doc = parser.load(P("s.json"));
  ASSERT_EQ(doc.error(), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["verdict"]), "within_tolerance");
  // The same pair diverges under a tolerance tighter than its difference.
  EXPECT_EQ(Run({P("a.jsonl"), P("close.jsonl"), "--rtol", "1e-6"}), kExitDiverged) << err_.str();
}

TEST_F(DiffCommandTest, DivergedExitsOneAndWritesBothOutputs) {
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "--json", P("s.json"), "-o", P("r.html"), "--color",
                 "never"}),
            kExitDiverged)
      << err_.str();
  std::string out = out_.str();
  EXPECT_NE(out.find("diverged"), std::string::npos) << out;
  EXPECT_NE(out.find("A seq 3"), std::string::npos) << out;
  EXPECT_EQ(out.find('\033'), std::string::npos) << "no colour when not a TTY";
  simdjson::dom::parser parser;
  auto doc = parser.load(P("s.json"));
  ASSERT_EQ(doc.error(), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["verdict"]), "diverged");
  EXPECT_EQ(uint64_t(doc["first_divergence"]["a_seq"]), 3u);
  EXPECT_EQ(int64_t(doc["first_divergence"]["a_arg"]), 2);
  EXPECT_EQ(uint64_t(doc["first_nonfinite"]["b"]["seq"]), 5u);
  std::string html = ReadFileText(P("r.html"));
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_NE(html.find("numtrace-data"), std::string::npos);
  // Nothing temporary left behind.
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST_F(DiffCommandTest, QuietPrintsNothingButKeepsExitCode) {
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "--quiet"}), kExitDiverged);
  EXPECT_TRUE(out_.str().empty()) << out_.str();
}

TEST_F(DiffCommandTest, RefusesToOverwriteBeforeWorkingAndForceOverwrites) {
  std::ofstream(P("s.json")) << "keep me";
  // Even with an unreadable input, the refusal comes first.
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "--json", P("s.json")}), kExitError);
  ExpectOneErrorLine(P("s.json") + ": output file exists");
  EXPECT_EQ(ReadFileText(P("s.json")), "keep me");
  std::ofstream(P("r.html")) << "keep me too";
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "-o", P("r.html")}), kExitError);
  EXPECT_EQ(ReadFileText(P("r.html")), "keep me too");
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "--json", P("s.json"), "--force"}), kExitDiverged)
      << err_.str();
  EXPECT_NE(ReadFileText(P("s.json")).find("numtrace-diff-summary"), std::string::npos);
}

TEST_F(DiffCommandTest, MissingInputNamesTheFile) {
  EXPECT_EQ(Run({P("a.jsonl"), P("nope.jsonl")}), kExitError);
  ExpectOneErrorLine("nope.jsonl");
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(DiffCommandTest, MalformedTraceNamesFileAndLine) {
  std::ofstream(P("bad.jsonl")) << ReadFileText(P("a.jsonl")).substr(0, 200) << "\n{\"type\":\"kernel\",\"seq\":\n";
  std::string text = ReadFileText(P("bad.jsonl"));
  EXPECT_EQ(Run({P("a.jsonl"), P("bad.jsonl")}), kExitError);
  ExpectOneErrorLine("bad.jsonl");
}

TEST_F(DiffCommandTest, BadFlagValuesAreUsageErrors) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{P("a.jsonl"), P("b.jsonl"), "--rtol", "-1"},
        {P("a.jsonl"), P("b.jsonl"), "--atol", "nan"},
        {P("a.jsonl"), P("b.jsonl"), "--rtol", "abc"},
        {P("a.jsonl"), P("b.jsonl"), "--color", "blue"},
        {P("a.jsonl"), P("b.jsonl"), "--top", "-3"},
        {P("a.jsonl"), P("b.jsonl"), "--no-such-flag"},
        {P("a.jsonl")}}) {
    EXPECT_EQ(Run(args), kExitError) << args.back();
    std::string e = err_.str();
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    EXPECT_TRUE(e.starts_with("numtrace-diff: ")) << e;
  }
}

TEST_F(DiffCommandTest, HelpExitsZero) {
  EXPECT_EQ(Run({"--help"}), kExitOk);
  EXPECT_NE(out_.str().find("--json"), std::string::npos);
}

TEST_F(DiffCommandTest, OverrideFileErrorsAreReported) {
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "--override", P("missing.txt")}), kExitError);
  ExpectOneErrorLine("missing.txt");
}

TEST_F(DiffCommandTest, DirectoriesArePairedByRank) {
  fs::create_directories(dir_ / "runA");
  fs::create_directories(dir_ / "runB");
  WriteTrace(dir_ / "runA" / "rank_0.ntrace.jsonl", {1, 2, 3}, 0);
  WriteTrace(dir_ / "runB" / "rank_0.ntrace.jsonl", {1, 2, 3}, 0);
  WriteTrace(dir_ / "runA" / "rank_1.ntrace.jsonl", {1, 2, 3, 4}, 1);
  WriteTrace(dir_ / "runB" / "rank_1.ntrace.jsonl", {1, 2.5, 3, 4}, 1, -1, /*footer=*/false);
  EXPECT_EQ(Run({P("runA"), P("runB"), "--json", P("s.json"), "-o", P("r.html")}), kExitDiverged)
      << err_.str();
  simdjson::dom::parser parser;
  auto doc = parser.load(P("s.json"));
  ASSERT_EQ(doc.error(), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["verdict"]), "diverged");
  EXPECT_EQ(int64_t(doc["first_divergence"]["rank"]), 1);
  EXPECT_EQ(uint64_t(doc["first_divergence"]["a_seq"]), 1u);
  EXPECT_TRUE(bool(doc["b"]["truncated"]));
  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(std::string_view(ranks.at(0)["verdict"]), "identical");
  EXPECT_EQ(int64_t(ranks.at(1)["rank"]), 1);
  EXPECT_NE(out_.str().find("truncated"), std::string::npos) << out_.str();
}

TEST_F(DiffCommandTest, IncompleteComparisonWarnsOnStderrAndStrictExitsOne) {
  // Same values, but B was cut short (no footer): identical, yet incomplete.
  WriteTrace(dir_ / "cut.jsonl", {1, 2, 3, 4, 5, 6}, 0, -1, /*footer=*/false);
  EXPECT_EQ(Run({P("a.jsonl"), P("cut.jsonl"), "--quiet", "--json", P("s.json")}), kExitOk);
  EXPECT_TRUE(out_.str().empty());
  ExpectOneErrorLine("incomplete comparison: B (" + P("cut.jsonl") + "): cut short");
  simdjson::dom::parser parser;
  auto doc = parser.load(P("s.json"));
  ASSERT_EQ(doc.error(), simdjson::SUCCESS);
  EXPECT_FALSE(bool(doc["complete"]));
  EXPECT_EQ(Run({P("a.jsonl"), P("cut.jsonl"), "--strict"}), kExitDiverged);
  ExpectOneErrorLine("cut short");
  // A footer that admits dropped records: "records dropped".
  WriteTrace(dir_ / "dropped.jsonl", {1, 2, 3, 4, 5, 6}, 0, -1, /*footer=*/false);
  std::string footer;
  FooterRecord f;
  f.kernels = f.launches = 8;
  f.dropped = 2;
  AppendJsonLine(f, &footer);
  std::ofstream(dir_ / "dropped.jsonl", std::ios::app) << footer;
  EXPECT_EQ(Run({P("dropped.jsonl"), P("a.jsonl"), "--strict", "--quiet"}), kExitDiverged);
  ExpectOneErrorLine("A (" + P("dropped.jsonl") + "): records dropped (2)");
  // Complete traces: no warning, --strict changes nothing.
  EXPECT_EQ(Run({P("a.jsonl"), P("same.jsonl"), "--strict"}), kExitOk);
  EXPECT_TRUE(err_.str().empty()) << err_.str();
}

TEST_F(DiffCommandTest, FileAgainstDirectoryIsAnError) {
  fs::create_directories(dir_ / "runB");
  EXPECT_EQ(Run({P("a.jsonl"), P("runB")}), kExitError);
  ExpectOneErrorLine("is a directory");
}

// The real binary: exit codes and streams as a shell sees them.
TEST_F(DiffCommandTest, BinaryExitCodes) {
  std::string bin = std::string(NUMTRACE_BINARY_DIR) + "/bin/numtrace-diff";
  if (!fs::exists(bin)) GTEST_SKIP() << bin << " not built";
  auto code = [&](const std::string& args) {
    int status = std::system((bin + " " + args + " >/dev/null 2>" + P("err.txt")).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(code(P("a.jsonl") + " " + P("same.jsonl")), 0);
  EXPECT_EQ(code(P("a.jsonl") + " " + P("b.jsonl")), 1);
  EXPECT_EQ(code(P("a.jsonl") + " " + P("nope.jsonl")), 2);
  EXPECT_NE(ReadFileText(P("err.txt")).find("nope.jsonl"), std::string::npos);
}

// Watch traces (digest records) with launches the shim could not digest
// (`lost`): they count like unmeasured kernels. The summary is incomplete,
// the side says how many, one stderr line names them, --strict exits 1.
void WriteWatchTrace(const fs::path& path, uint64_t lost) {
  std::string out;
  TraceHeader h;
  h.producer = "test";
  h.capture = CaptureInfo{{}, "changed", "mode=mark steps=none", {}, "full", {}};
  AppendJsonLine(h, &out);
  AppendJsonLine(KernelNameRecord{0, "gemm"}, &out);
  for (int64_t step = 0; step < 3; ++step) {
    DigestRecord d;
    d.step = step;
    d.kernel_hashes = {0x100u + static_cast<uint64_t>(step), 0x200};
    if (step == 1 && lost != 0) d.kernel_hashes[1] = 0;  // the lost launch's digest
    d.names = {0, 0};
    d.kernels = 2;
    d.hash = StepHash(d.kernel_hashes);
    d.lost = step == 1 ? lost : 0;
    AppendJsonLine(d, &out);
  }
  AppendJsonLine(FooterRecord{}, &out);
  std::ofstream(path) << out;
}

TEST_F(DiffCommandTest, UndigestedLaunchesMakeTheComparisonIncomplete) {
  WriteWatchTrace(dir_ / "wa.jsonl", 0);
  WriteWatchTrace(dir_ / "wb.jsonl", 1);
  EXPECT_EQ(Run({P("wa.jsonl"), P("wb.jsonl"), "--quiet", "--json", P("s.json")}), kExitOk) << err_.str();
  ExpectOneErrorLine("incomplete comparison: B (" + P("wb.jsonl") + "): 1 launches not digested");
  simdjson::dom::parser parser;
  auto doc = parser.load(P("s.json"));
  ASSERT_EQ(doc.error(), simdjson::SUCCESS);
  EXPECT_FALSE(bool(doc["complete"]));
  EXPECT_EQ(uint64_t(doc["b"]["undigested"]), 1u);
  EXPECT_EQ(uint64_t(doc["a"]["undigested"]), 0u);
  EXPECT_EQ(Run({P("wa.jsonl"), P("wb.jsonl"), "--strict"}), kExitDiverged);
  EXPECT_NE(out_.str().find("1 launches not digested in B"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("1 launches of B were not digested"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("incomplete: "), std::string::npos) << out_.str();
  // Every launch digested: complete, --strict changes nothing.
  EXPECT_EQ(Run({P("wa.jsonl"), P("wa.jsonl"), "--strict", "--json", P("s2.json")}), kExitOk) << err_.str();
  EXPECT_TRUE(err_.str().empty()) << err_.str();
  auto doc2 = parser.load(P("s2.json"));
  ASSERT_EQ(doc2.error(), simdjson::SUCCESS);
  EXPECT_TRUE(bool(doc2["complete"]));
}

}  // namespace
}  // namespace numtrace::analyzer
