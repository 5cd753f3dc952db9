// Configuration means one thing to the runtime: strict mode takes every
// switch word, NUMTRACE_ENABLE=0 silences everything, every message is one
// line whatever the value holds, and a process tree prints a message once.
// (That every switch takes the same words is the settings' own test:
// test/common/settings/config_test.cc.)
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/settings/config.h"
#include "shim/engine/runtime.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::MapEnv;

TEST(ConfigWordsTest, StrictTrueExitsOnABadValueLikeStrictOne) {
  // Before: only the exact string "1" turned strict mode on.
  EXPECT_EXIT(
      {
        Runtime rt(MapEnv({{"NUMTRACE_STRICT", "true"}, {"NUMTRACE_OUTPUTS", "most"}}));
        rt.Configure();
      },
      ::testing::ExitedWithCode(2), "NUMTRACE_OUTPUTS='most'");
}

TEST(ConfigWordsTest, EnableZeroSilencesEverythingElse) {
  std::string error;
  auto c = settings::ParseConfig(MapEnv({{"NUMTRACE_ENABLE", "off"}, {"NUMTRACE_STEPS", "soon"},
                               {"NUMTRACE_STRICT", "1"}}),
                       &error);
  ASSERT_TRUE(c.has_value()) << error;
  EXPECT_FALSE(c->enabled);
  Runtime rt(MapEnv({{"NUMTRACE_ENABLE", "0"}, {"NUMTRACE_STEPS", "soon"}, {"NUMTRACE_STRICT", "1"}}));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(rt.Configure());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(ConfigWordsTest, AValueWithNewlinesIsStillOneLine) {
  std::string error;
  EXPECT_FALSE(settings::ParseConfig(MapEnv({{"NUMTRACE_STEPS", "2\nnumtrace: forged line\r\x1b[2J"}}), &error));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
  EXPECT_NE(error.find("2\\nnumtrace: forged line\\x0d\\x1b[2J"), std::string::npos) << error;
  Runtime rt(MapEnv({{"NUMTRACE_LABEL", "x"}, {"NUMTRACE_OUTPUTS", "a\nb"}}));
  ::testing::internal::CaptureStderr();
  rt.Configure();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

// Children of a process inherit its environment, and so its bad setting:
// the first process prints the line and marks the environment.
TEST(ConfigWordsTest, AProcessTreePrintsTheMessageOnce) {
  const settings::GetEnvFn real = [](const char* n) -> const char* { return std::getenv(n); };
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("NUMTRACE_STEPS", "soon", 1);
    ::unsetenv(Runtime::kReportedVar);
    ::testing::internal::CaptureStderr();
    Runtime first(real);
    first.Configure();
    std::string parent_err = ::testing::internal::GetCapturedStderr();
    int lines_child = -1;
    int fds[2];
    if (::pipe(fds) != 0) _exit(10);
    pid_t child = ::fork();
    if (child == 0) {  // a child process of the job: same environment, no line
      ::testing::internal::CaptureStderr();
      Runtime again(real);
      again.Configure();
      std::string e = ::testing::internal::GetCapturedStderr();
      char n = static_cast<char>(std::count(e.begin(), e.end(), '\n'));
      (void)!::write(fds[1], &n, 1);
      _exit(0);
    }
    char n = 99;
    ::waitpid(child, nullptr, 0);
    if (::read(fds[0], &n, 1) == 1) lines_child = n;
    // A different bad value in the same tree is a different message.
    ::setenv("NUMTRACE_STEPS", "never", 1);
    ::testing::internal::CaptureStderr();
    Runtime other(real);
    other.Configure();
    std::string other_err = ::testing::internal::GetCapturedStderr();
    const bool right = std::count(parent_err.begin(), parent_err.end(), '\n') == 1 && lines_child == 0 &&
                       other_err.find("'never'") != std::string::npos;
    _exit(right ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace numtrace::shim
