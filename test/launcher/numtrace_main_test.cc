#include "launcher/numtrace_main.h"

#include <algorithm>
#include <string>


#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/doctor/system_probe.h"
#include "test/launcher/launcher_test_util.h"
#include "test/util/test_paths.h"

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using testing::TestContext;

const std::string kExamples = std::string(NUMTRACE_SOURCE_DIR) + "/examples/basic";

TEST(NumtraceMain, EveryVerbsHelpShowsExamples) {
  for (const char* verb : {"run", "twice", "show", "doctor"}) {
    TestContext t;
    MachineProbe probe;
    EXPECT_EQ(NumtraceMain({verb, "--help"}, t.ctx, probe), 0) << verb;
    EXPECT_THAT(t.out.str(), HasSubstr("Examples:")) << verb;
  }
  TestContext t;
  MachineProbe probe;
  EXPECT_EQ(NumtraceMain({"--help"}, t.ctx, probe), 0);
  EXPECT_THAT(t.out.str(), HasSubstr("numtrace twice -o hunt"));
}

TEST(NumtraceMain, DiffIsNumtraceDiff) {
  TestContext t;
  MachineProbe probe;
  // The example pair diverges: exit 1 and the terminal summary.
  EXPECT_EQ(NumtraceMain({"diff", kExamples + "/run_a", kExamples + "/run_b", "--color", "never"}, t.ctx, probe), 1);
  EXPECT_THAT(t.out.str(), HasSubstr("diverged"));
  TestContext bad;
  EXPECT_EQ(NumtraceMain({"diff", "/no/a", "/no/b"}, bad.ctx, probe), 2);
  // One convention for both front ends: the verb as typed, not numtrace-diff.
  const std::string err = bad.err.str();
  EXPECT_TRUE(err.starts_with("numtrace diff: ")) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(NumtraceMain, AnUnknownVerbIsOneLineAndExit2) {
  TestContext t;
  MachineProbe probe;
  EXPECT_EQ(NumtraceMain({"frobnicate"}, t.ctx, probe), 2);
  EXPECT_EQ(t.err.str(), "numtrace frobnicate: unknown verb (run, diff, merge, twice, show, doctor; see numtrace --help)\n");
  TestContext none;
  EXPECT_EQ(NumtraceMain({}, none.ctx, probe), 2);
}

}  // namespace
}  // namespace numtrace::launcher
