// `numtrace run` / `twice` judge every capture setting with the shim's own
// parsers (common/settings/settings.h) before anything starts.
#include <filesystem>
#include <fstream>
#include <ostream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/run_command.h"
#include "launcher/twice_command.h"
#include "common/settings/settings.h"
#include "test/launcher/launcher_test_util.h"

namespace numtrace::launcher {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;
using testing::TestContext;

size_t Lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

struct BadOption {
  const char* option;
  const char* value;
};

// The case as its ctest name shows it (not a byte dump of the pointers).
void PrintTo(const BadOption& b, std::ostream* os) { *os << b.option << "='" << b.value << "'"; }

class RunRefusesBadOption : public ::testing::TestWithParam<BadOption> {};

// The issue's repros: each ran the whole job uncaptured and exited 0.
TEST_P(RunRefusesBadOption, BeforeMakingTheDirectoryOrStartingTheJob) {
  const BadOption& b = GetParam();
  TempDir tmp;
  TestContext t;
  const std::string marker = tmp / "job-ran";
  int code = RunCommandMain({"run", "-o", tmp / "r", b.option, b.value, "--", "sh", "-c", "touch " + marker},
                            t.ctx);
  EXPECT_EQ(code, 2);
  EXPECT_THAT(t.err.str(), StartsWith(std::string("numtrace run: ") + b.option + " '" + b.value +
                                      "' is not valid; accepted: "));
  EXPECT_EQ(Lines(t.err.str()), 1u) << t.err.str();
  EXPECT_FALSE(fs::exists(marker)) << "the job was started";
  EXPECT_FALSE(fs::exists(tmp / "r")) << "the directory was made";
}

INSTANTIATE_TEST_SUITE_P(IssueRepros, RunRefusesBadOption,
                         ::testing::Values(BadOption{"--steps", "two"}, BadOption{"--steps", "1-x"},
                                           BadOption{"--launch-count", "0x"},
                                           BadOption{"--kernel-name", "regex:("},
                                           BadOption{"--outputs", "bogus"}, BadOption{"--step-mark", "epoch"},
                                           BadOption{"--min-bytes", "lots"}, BadOption{"--steps", ""},
                                           BadOption{"--dump-expect", "k@"},
                                           BadOption{"--allocator", "bogus"}));

TEST(RunSettings, ABadVariableInTheEnvironmentIsNamedAsTheVariable) {
  TempDir tmp;
  TestContext t;
  t.ctx.env.Set("NUMTRACE_STEPS", "two");
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--", "true"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), StartsWith("numtrace run: NUMTRACE_STEPS (in the environment) 'two' is not valid"));
  EXPECT_FALSE(fs::exists(tmp / "r"));
  // The option wins over the environment, as it does in the job.
  TestContext fixed;
  fixed.ctx.env.Set("NUMTRACE_STEPS", "two");
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--steps", "1", "--", "true"}, fixed.ctx), 0)
      << fixed.err.str();
}

TEST(RunSettings, TwiceRefusesBeforeEitherRun) {
  TempDir tmp;
  TestContext t;
  EXPECT_EQ(TwiceCommandMain({"twice", "-o", tmp / "h", "--launch-count", "0", "--", "true"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), StartsWith("numtrace twice: --launch-count '0' is not valid"));
  EXPECT_FALSE(fs::exists(tmp / "h"));
}

TEST(RunSettings, EnableOffInTheEnvironmentIsSaid) {
  TempDir tmp;
  TestContext t;
  t.ctx.env.Set("NUMTRACE_ENABLE", "0");
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--", "true"}, t.ctx), 0);
  EXPECT_THAT(t.err.str(), HasSubstr("NUMTRACE_ENABLE=0 in the environment: the job runs without capture"));
}

TEST(RunSettings, EveryTableOptionIsInHelp) {
  TestContext t;
  EXPECT_EQ(RunCommandMain({"run", "--help"}, t.ctx), 0);
  for (const settings::Setting& s : settings::Settings()) {
    if (s.option.empty()) continue;
    const std::string option(s.option);
    const std::string last = option.substr(option.rfind(',') + 1);
    EXPECT_THAT(t.out.str(), HasSubstr(last)) << s.variable;
    EXPECT_THAT(t.out.str(), HasSubstr(std::string(s.variable))) << s.variable;
  }
}

TEST(RunSettings, ARelativeDumpDirIsResolvedAgainstNumtracesDirectory) {
  TempDir tmp;
  TestContext t;
  const std::string seen = tmp / "env.txt";
  int code = RunCommandMain({"run", "-o", tmp / "r", "--dump", "seq:1", "--dump-dir", "dumps", "--", "sh", "-c",
                             "cd / && echo \"$NUMTRACE_DUMP_DIR\" > " + seen},
                            t.ctx);
  ASSERT_EQ(code, 0) << t.err.str();
  std::ifstream in(seen);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, (fs::current_path() / "dumps").string());
}

}  // namespace
}  // namespace numtrace::launcher

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestContext;

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// `run -o D CMD ARGS...` is `run -o D -- CMD ARGS...`: what follows the
// command is the command's, numtrace's own options included.
TEST(RunCommandLine, OptionsAfterTheCommandBelongToTheCommand) {
  TempDir tmp;
  const std::string seen = tmp / "seen.txt";
  for (bool dashes : {false, true}) {
    TestContext t;
    std::vector<std::string> args = {"run", "-o", tmp / (dashes ? "a" : "b"), "--steps", "1"};
    if (dashes) args.push_back("--");
    for (const char* a : {"sh", "-c", "echo \"$NUMTRACE_STEPS $*\" > \"$0\""}) args.push_back(a);
    args.push_back(seen);
    for (const char* a : {"--steps", "3", "--force"}) args.push_back(a);
    ASSERT_EQ(RunCommandMain(args, t.ctx), 0) << t.err.str();
    EXPECT_EQ(FirstLine(seen), "1 --steps 3 --force") << (dashes ? "with --" : "without --");
  }
}

TEST(RunCommandLine, AnUnknownOptionOrNoCommandIsOneLine) {
  TempDir tmp;
  TestContext t;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--stpes", "2", "true"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), HasSubstr("numtrace run: unknown option --stpes"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "r"));
  TestContext none;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--"}, none.ctx), 2);
  EXPECT_THAT(none.err.str(), HasSubstr("no command given"));
  // After --, a command may start with '-' like any name.
  TestContext dash;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--", "-not-a-program"}, dash.ctx), 127);
}

TEST(RunCommandLine, ABareOptionalValueOptionNeverTakesTheCommand) {
  const settings::Setting table[] = {
      {.variable = "NUMTRACE_W", .option = "--watch", .value_name = "HOW", .implicit_value = "full"},
      {.variable = "NUMTRACE_L", .option = "-l,--label", .value_name = "TEXT"},
  };
  using Args = std::vector<std::string>;
  // Bare: the implicit value, and python stays the command.
  EXPECT_EQ(NormalizeRunArgs({"run", "--watch", "python", "--watch"}, table),
            (Args{"run", "--watch=full", "python", "--watch"}));
  // A value given with '=' is kept; an option's value is skipped, even one
  // that looks like an option; nothing after the command changes.
  EXPECT_EQ(NormalizeRunArgs({"run", "--watch=sampled", "-l", "--watch", "--", "x", "--watch"}, table),
            (Args{"run", "--watch=sampled", "-l", "--watch", "--", "x", "--watch"}));
}

TEST(RunCommandLine, AnOptionalValueGivenAfterASpaceIsTheValue) {
  // `--watch sampled` (space-separated, like every other option) once ran
  // `sampled` as the command; a word the setting accepts is its value.
  using Args = std::vector<std::string>;
  EXPECT_EQ(NormalizeRunArgs({"run", "--watch", "sampled", "--", "python", "t.py"}),
            (Args{"run", "--watch=sampled", "--", "python", "t.py"}));
  EXPECT_EQ(NormalizeRunArgs({"run", "--watch", "python", "t.py"}), (Args{"run", "--watch=full", "python", "t.py"}));
}

TEST(RunCommandLine, AMistypedSettingOrAHooksLogNoHookWritesIsSaid) {
  // NUMTRACE_STEP=1 (for NUMTRACE_STEPS) was ignored in silence, and so was
  // --hooks-log where no hook runs (hostile round 4, finding 12).
  TempDir tmp;
  TestContext t;
  t.ctx.env.Set("NUMTRACE_STEP", "1");
  t.ctx.env.Set("NUMTRACE_LIB_PATH", "/x");  // numtrace's own, not a setting: no line
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", "--hooks-log", tmp / "h.log", "--", "true"}, t.ctx), 0);
  EXPECT_THAT(t.err.str(), HasSubstr("NUMTRACE_STEP in the environment is not a numtrace setting and is ignored: "
                                     "did you mean NUMTRACE_STEPS?"));
  EXPECT_THAT(t.err.str(), Not(HasSubstr("NUMTRACE_LIB_PATH")));
  EXPECT_THAT(t.err.str(), HasSubstr("the command does not look like Python: the PyTorch hooks are not on this "
                                     "job's path, so no hooks log is written (--torch-hooks puts them there)"));
  TestContext off;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r2", "--hooks-log", tmp / "h.log", "--no-torch-hooks", "--",
                            "python3", "-c", "pass"},
                           off.ctx),
            0);
  EXPECT_THAT(off.err.str(), HasSubstr("--no-torch-hooks: the PyTorch hooks are not on this job's path"));
}

TEST(RunCommandLine, AnEmptyOptionalValueIsRefusedAsTheEnvironmentsIs) {
  // `--watch=` once meant `full` silently, while NUMTRACE_WATCH= is refused.
  TempDir tmp;
  for (const char* given : {"--watch=", "--watch=true"}) {
    TestContext t;
    EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "r", given, "--", "true"}, t.ctx), 2) << given;
    EXPECT_THAT(t.err.str(), HasSubstr("--watch")) << given;
    EXPECT_FALSE(std::filesystem::exists(tmp / "r")) << given;
  }
  TestContext bare;
  EXPECT_EQ(RunCommandMain({"run", "-o", tmp / "ok", "--watch", "--", "true"}, bare.ctx), 0) << bare.err.str();
}

}  // namespace
}  // namespace numtrace::launcher

#include "analyzer/cli/diff_command.h"

namespace numtrace::launcher {
namespace {

// Issue 15: `run -o j1 --force` into a directory of an earlier run listed the
// old rank_0.ntrace.jsonl as this run's, and diff paired it by name.
TEST(RunForce, TheListingNamesOnlyThisRunsTracesAndDiffRefusesTheMix) {
  TempDir tmp;
  const std::string sim = testing::BuildBin() + "/numtrace-sim";
  TestContext first;
  ASSERT_EQ(RunCommandMain({"run", "-o", tmp / "j1", "--steps", "1", "--", sim, "--steps", "2"}, first.ctx), 0)
      << first.err.str();
  TestContext other;
  ASSERT_EQ(RunCommandMain({"run", "-o", tmp / "j2", "--steps", "1", "--", sim, "--steps", "2"}, other.ctx), 0);
  TestContext again;
  ASSERT_EQ(RunCommandMain({"run", "-o", tmp / "j1", "--force", "--steps", "1", "--", sim, "--steps", "2"},
                           again.ctx),
            0)
      << again.err.str();
  const std::string err = again.err.str();
  EXPECT_THAT(err, HasSubstr("rank 0: 15 kernels captured, complete: " + (tmp / "j1") + "/rank_0.pid"));
  EXPECT_EQ(err.find("j1/rank_0.ntrace.jsonl"), std::string::npos) << err;
  EXPECT_THAT(err, HasSubstr("1 trace in " + (tmp / "j1") + " came from an earlier run and is not listed"));
  EXPECT_THAT(err, HasSubstr("numtrace diff refuses the directory"));
  // And diff does refuse it, naming both files, though j2 has one rank_0.ntrace.jsonl.
  std::ostringstream out, diff_err;
  const std::string a = tmp / "j1", b = tmp / "j2";
  const char* argv[] = {"numtrace-diff", a.c_str(), b.c_str()};
  EXPECT_EQ(analyzer::DiffMain(3, argv, out, diff_err, false), 2);
  EXPECT_THAT(diff_err.str(), HasSubstr("rank 0 has several traces"));
  EXPECT_THAT(diff_err.str(), HasSubstr("rank_0.ntrace.jsonl, rank_0.pid"));
}

}  // namespace
}  // namespace numtrace::launcher

namespace numtrace::launcher {
namespace {

// Issue 15: `--dump seq:99` that is never reached said nothing.
TEST(RunDump, ASeqNeverReachedIsSaidOnStderrAndInTheTrace) {
  testing::TempDir tmp;
  testing::TestContext t;
  const std::string sim = testing::BuildBin() + "/numtrace-sim";
  ::testing::internal::CaptureStderr();  // the job's own stderr (the shim's line)
  ASSERT_EQ(RunCommandMain({"run", "-o", tmp / "d", "--steps", "1", "--dump", "seq:99", "--", sim, "--steps", "2"},
                           t.ctx),
            0)
      << t.err.str();
  const std::string job_err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(job_err, ::testing::HasSubstr("NUMTRACE_DUMP=seq:99: seq 99 never reached (the run captured seq 0..14)"));
  std::ifstream in(tmp / "d/rank_0.ntrace.jsonl");
  std::string trace((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(trace, ::testing::HasSubstr("seq 99 never reached"));
}

}  // namespace
}  // namespace numtrace::launcher
