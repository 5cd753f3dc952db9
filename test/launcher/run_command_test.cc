#include "launcher/run_command.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/output_dir.h"
#include "test/launcher/launcher_test_util.h"

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::TestContext;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Issue 24: at operator level the line for no trace says what that level
// captures (eager ATen ops of the captured steps, not compiled code).
TEST(RunCommand, OperatorLevelWithNothingCapturedSaysWhatItCaptures) {
  TempDir tmp;
  TestContext t;
  int code = RunCommandMain({"run", "-o", tmp / "r", "--ops", "--", "sh", "-c", "exit 0"}, t.ctx);
  EXPECT_EQ(code, 0);
  EXPECT_THAT(t.err.str(), HasSubstr("operator level (--ops) captured no operator call"));
  EXPECT_EQ(t.err.str().find("captured a CUDA kernel launch"), std::string::npos) << t.err.str();
}

TEST(RunCommand, PassesTheJobsExitStatusThroughAndSaysNothingWasCaptured) {
  TempDir tmp;
  TestContext t;
  int code = RunCommandMain({"run", "-o", tmp / "r", "--", "sh", "-c", "exit 7"}, t.ctx);
  EXPECT_EQ(code, 7);
  EXPECT_THAT(t.err.str(), HasSubstr("exited with status 7"));
  EXPECT_THAT(t.err.str(), HasSubstr("no trace was written in"));
  // Issue 24: the job never started CUDA, and numtrace knows it (no
  // process left its mark in NUMTRACE_RUN_STATE): said as a fact, with
  // what captures such a job.
  EXPECT_THAT(t.err.str(), HasSubstr("the job never started CUDA (no process of it called cuInit with numtrace "
                                     "loaded)"));
  EXPECT_THAT(t.err.str(), HasSubstr("numtrace run --ops"));
  EXPECT_EQ(t.err.str().find("its stderr line says why"), std::string::npos);
  EXPECT_EQ(t.out.str(), "");  // stdout is the job's
}

// A process that started CUDA leaves an empty file named by its pid in
// NUMTRACE_RUN_STATE (Runtime::NoteCudaStarted; the shim's side is tested in
// test/shim/engine/runtime_test.cc): a job that did, and wrote no trace, is
// not told it never started CUDA. The directory is numtrace's own, gone
// after the run.
TEST(RunCommand, AJobThatStartedCudaAndWroteNoTraceIsToldHowManyProcessesDid) {
  TempDir tmp;
  TestContext t;
  const std::string seen = tmp / "state.txt";
  int code = RunCommandMain({"run", "-o", tmp / "r", "--", "sh", "-c",
                             "echo \"$NUMTRACE_RUN_STATE\" > " + seen + "; touch \"$NUMTRACE_RUN_STATE/$$\""},
                            t.ctx);
  ASSERT_EQ(code, 0) << t.err.str();
  EXPECT_THAT(t.err.str(), HasSubstr("1 process of the job started CUDA, and none captured a kernel launch: "
                                     "launches outside the captured steps"));
  EXPECT_EQ(t.err.str().find("never started CUDA"), std::string::npos) << t.err.str();
  std::string state = Slurp(seen);
  ASSERT_FALSE(state.empty());
  state.pop_back();
  EXPECT_FALSE(std::filesystem::exists(state)) << state << " was left behind";
}

TEST(RunCommand, TheJobSeesTheLibraryAndSettings) {
  TempDir tmp;
  TestContext t;
  const std::string seen = tmp / "env.txt";
  int code = RunCommandMain({"run", "-o", tmp / "r", "--steps", "1", "--label", "A", "--dump", "seq:3", "--",
                             "sh", "-c", "echo \"$LD_PRELOAD|$NUMTRACE_OUTPUT_DIR|$NUMTRACE_STEPS|$NUMTRACE_LABEL|$NUMTRACE_DUMP\" > " + seen},
                            t.ctx);
  ASSERT_EQ(code, 0) << t.err.str();
  EXPECT_EQ(Slurp(seen), t.ctx.layout.library + "|" + (tmp / "r") + "|1|A|seq:3\n");
}

TEST(RunCommand, RefusesAnExistingNonEmptyDirectoryUnlessForced) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "r");
  std::ofstream(tmp / "r/old.txt") << "x";
  TestContext t;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--", "true"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), HasSubstr("not empty"));
  const std::string err = t.err.str();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  TestContext forced;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--force", "--", "true"}, forced.ctx), 0);
}

TEST(RunCommand, AMissingCommandOrLibraryIsOneLineAndExit2) {
  TempDir tmp;
  TestContext t;
  // As a shell: 127 not found, 126 not executable - not 2, which a job may exit with.
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--", "no-such-program-xyz"}, t.ctx), 127);
  EXPECT_THAT(t.err.str(), HasSubstr("numtrace run: no-such-program-xyz: No such file or directory"));
  std::ofstream(tmp / "not-executable") << "#!/bin/sh\n";
  TestContext noexec;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "n", "--", tmp / "not-executable"}, noexec.ctx), 126);
  EXPECT_THAT(noexec.err.str(), HasSubstr("Permission denied"));
  TestContext nolib;
  nolib.ctx.layout.library = tmp / "missing/libnumtrace.so";
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "s", "--", "true"}, nolib.ctx), 2);
  EXPECT_THAT(nolib.err.str(), HasSubstr("libnumtrace.so not found"));
  TestContext usage;
  EXPECT_EQ(RunCommandMain({"run", "--", "true"}, usage.ctx), 2);  // -o is required
}

TEST(RunCommand, ListsOneLinePerRankAfterTheJob) {
  TempDir tmp;
  TestContext t;
  int code = RunCommandMain({"run", "-o", tmp / "r", "--steps", "1", "--", testing::BuildBin() + "/numtrace-sim",
                             "--steps", "2"},
                            t.ctx);
  ASSERT_EQ(code, 0) << t.err.str();
  EXPECT_THAT(t.err.str(), HasSubstr("rank 0: 15 kernels captured, complete: " + (tmp / "r") +
                                         "/rank_0.ntrace.jsonl"));
}

TEST(RunCommand, AJobKilledMidCaptureIsListedAsTruncatedAndItsSignalPassedThrough) {
  TempDir tmp;
  TestContext t;
  int code = RunCommandMain({"run", "-o", tmp / "r", "--steps", "all", "--", testing::BuildBin() + "/numtrace-sim",
                             "--steps", "2", "--kill-after", "20"},
                            t.ctx);
  EXPECT_EQ(code, 128 + 9);  // SIGKILL, as a shell reports it
  EXPECT_THAT(t.err.str(), HasSubstr("kernels captured, TRUNCATED (no footer: the process was cut short)"));
  EXPECT_THAT(t.err.str(), HasSubstr("the job was killed by signal 9 (SIGKILL)"));
}

TEST(RunCommand, HelpShowsExamples) {
  TestContext t;
  EXPECT_EQ(RunCommandMain({"run", "--help"}, t.ctx), 0);
  EXPECT_THAT(t.out.str(), HasSubstr("Examples:"));
  EXPECT_THAT(t.out.str(), HasSubstr("numtrace run -o runA"));
}

TEST(OutputDir, CreatesMissingDirectoriesAndReturnsAnAbsolutePath) {
  TempDir tmp;
  absl::StatusOr<std::string> dir = PrepareOutputDir(tmp / "a/b", false);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*dir, tmp / "a/b");
  EXPECT_TRUE(std::filesystem::is_directory(*dir));
  std::ofstream(tmp / "file") << "x";
  EXPECT_FALSE(PrepareOutputDir(tmp / "file", true).ok());  // not a directory
}

}  // namespace
}  // namespace numtrace::launcher
