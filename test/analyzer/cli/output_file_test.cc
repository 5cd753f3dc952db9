// Outputs never destroy anything: inputs, devices, files that appear during
// the run; write errors and signals leave no temporary file.
#include "analyzer/cli/output_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "test/util/scratch_dir.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using numtrace::testing::FreshTestDir;
using numtrace::testing::ReadFileText;
using numtrace::testing::WriteFileText;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("outfile");
    WriteFileText(dir_ / "a.jsonl", "A");
    WriteFileText(dir_ / "b.jsonl", "B");
    fs::create_directories(dir_ / "runA");
    WriteFileText(dir_ / "runA" / "rank_0.ntrace.jsonl", "R0");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& n) const { return (dir_ / n).string(); }
  absl::Status Check(const std::string& out, bool force) {
    return CheckOutputs({{"--json", out}}, {P("a.jsonl"), P("b.jsonl"), P("runA")}, force);
  }
  // Only the listed names are in the directory: no temporary left over.
  void ExpectOnly(std::vector<std::string> names) {
    std::vector<std::string> have;
    for (const auto& e : fs::directory_iterator(dir_)) have.push_back(e.path().filename().string());
    std::sort(have.begin(), have.end());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(have, names);
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, AnInputIsRefusedUnderEverySpellingEvenWithForce) {
  fs::create_symlink(dir_ / "a.jsonl", dir_ / "link.jsonl");
  fs::create_hard_link(dir_ / "b.jsonl", dir_ / "hard.jsonl");
  const std::string rel = fs::relative(dir_ / "a.jsonl").string();
  for (const std::string& out :
       {P("a.jsonl"), P("./b.jsonl"), rel, P("link.jsonl"), P("hard.jsonl"),
        P("runA/rank_0.ntrace.jsonl"), P("runA/../runA/rank_0.ntrace.jsonl")}) {
    absl::Status s = Check(out, /*force=*/true);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << out;
    EXPECT_NE(s.message().find("would overwrite the input"), absl::string_view::npos) << s;
  }
  // A new trace-named file in an input directory would join its trace set.
  absl::Status s = Check(P("runA/rank_1.ntrace.jsonl"), true);
  EXPECT_NE(s.message().find("would add a trace file to the input directory"), absl::string_view::npos) << s;
  EXPECT_TRUE(Check(P("runA/report.json"), false).ok());
  EXPECT_EQ(ReadFileText(dir_ / "a.jsonl"), "A");
}

TEST_F(OutputFileTest, NonRegularOutputsAreRefusedEvenWithForce) {
  ASSERT_EQ(::mkfifo(P("fifo").c_str(), 0600), 0);
  for (const std::string& out : {std::string("/dev/full"), std::string("/dev/null"), P("fifo"), P("runA")}) {
    absl::Status s = Check(out, true);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << out;
    EXPECT_NE(s.message().find("refused, also with --force"), absl::string_view::npos) << s;
  }
  struct stat st;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(OutputFileTest, ExistingRegularFileNeedsForceAndTwoOutputsMustDiffer) {
  WriteFileText(dir_ / "s.json", "old");
  EXPECT_NE(Check(P("s.json"), false).message().find("output file exists"), absl::string_view::npos);
  EXPECT_TRUE(Check(P("s.json"), true).ok());
  absl::Status s = CheckOutputs({{"--json", P("x.json")}, {"--html", P("./x.json")}}, {}, true);
  EXPECT_NE(s.message().find("name the same output"), absl::string_view::npos) << s;
  s = CheckOutputs({{"--json", "-"}, {"--html", "-"}}, {}, true);
  EXPECT_FALSE(s.ok());
}

TEST_F(OutputFileTest, WithoutForceAFileThatAppearedMeanwhileIsKept) {
  std::ostringstream out;
  ASSERT_TRUE(Check(P("new.json"), false).ok());
  WriteFileText(dir_ / "new.json", "someone else's");  // appears during the run
  absl::Status s = WriteOutput(P("new.json"), "report", /*force=*/false, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(ReadFileText(dir_ / "new.json"), "someone else's");
  ExpectOnly({"a.jsonl", "b.jsonl", "runA", "new.json"});
}

TEST_F(OutputFileTest, OfTwoRacingRunsOnlyOneCreatesTheName) {
  std::ostringstream out;
  int ok = 0;
  std::vector<pid_t> kids;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(WriteOutput(P("race.json"), "run " + std::to_string(i), false, out).ok() ? 0 : 1);
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  EXPECT_EQ(ok, 1);
  EXPECT_TRUE(ReadFileText(dir_ / "race.json").starts_with("run "));
  ExpectOnly({"a.jsonl", "b.jsonl", "runA", "race.json"});
}

TEST_F(OutputFileTest, ForceReplacesARegularFileButNeverWritesThroughASymlink) {
  std::ostringstream out;
  WriteFileText(dir_ / "s.json", "old");
  ASSERT_TRUE(WriteOutput(P("s.json"), "new", true, out).ok());
  EXPECT_EQ(ReadFileText(dir_ / "s.json"), "new");
  // A link onto a file that is no input (a trace of another run, anything):
  // refused before any work, with --force too, naming the link's target.
  fs::create_symlink(dir_ / "s.json", dir_ / "s-link.json");
  absl::Status s = Check(P("s-link.json"), /*force=*/true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("symbolic link (to " + P("s.json") + ")"), std::string::npos)
      << s.message();
  // And WriteOutput alone does not follow it either.
  EXPECT_FALSE(WriteOutput(P("s-link.json"), "newer", true, out).ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "s-link.json"));
  EXPECT_EQ(ReadFileText(dir_ / "s.json"), "new");
  ExpectOnly({"a.jsonl", "b.jsonl", "runA", "s.json", "s-link.json"});
}

TEST_F(OutputFileTest, WriteErrorIsOneLineAndLeavesNoTemporaryFile) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A 100-byte file size limit: write(2) fails with EFBIG, as ENOSPC would.
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl {100, 100};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    std::ostringstream out;
    absl::Status s = WriteOutput(P("big.json"), std::string(100000, 'x'), false, out);
    const bool right = s.code() == absl::StatusCode::kUnavailable &&
                       s.message().find("cannot write") != absl::string_view::npos &&
                       s.message().find('\n') == absl::string_view::npos;
    _exit(right ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ExpectOnly({"a.jsonl", "b.jsonl", "runA"});
}

TEST_F(OutputFileTest, SigtermWhileWritingRemovesTheTemporaryFile) {
  for (int sig : {SIGTERM, SIGINT}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      absl::StatusOr<TempOutput> t = TempOutput::Create(P("s.json"));
      if (!t.ok() || !t->Write("half a report").ok() || !fs::exists(t->path())) _exit(3);
      ::raise(sig);
      _exit(4);  // not reached: the signal ends the process
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    ExpectOnly({"a.jsonl", "b.jsonl", "runA"});
  }
}

TEST_F(OutputFileTest, DashWritesToStandardOutput) {
  std::ostringstream out;
  ASSERT_TRUE(WriteOutput("-", "{\"x\":1}\n", false, out).ok());
  EXPECT_EQ(out.str(), "{\"x\":1}\n");
  ExpectOnly({"a.jsonl", "b.jsonl", "runA"});
}

}  // namespace
}  // namespace numtrace::analyzer
