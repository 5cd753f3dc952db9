// File: test/launcher/launcher_test_util.h
//
// A CommandContext over string streams and the build tree's layout, and a
// fresh temporary directory per test, for driving verbs in process.
#ifndef NUMTRACE_TEST_LAUNCHER_LAUNCHER_TEST_UTIL_H_
#define NUMTRACE_TEST_LAUNCHER_LAUNCHER_TEST_UTIL_H_

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "launcher/command_context.h"
#include "test/util/test_paths.h"

namespace numtrace::launcher::testing {

inline std::string BuildBin() { return std::string(NUMTRACE_BINARY_DIR) + "/bin"; }

struct TestContext {
  std::ostringstream out, err;
  CommandContext ctx{out, err, Environment(), InstallLayout(), false};
  TestContext() {
    ctx.env = EnvironmentFromProcess();
    ctx.env.Unset("PYTORCH_CUDA_ALLOC_CONF");
    ctx.env.Unset("NUMTRACE_LIB");
    ctx.layout = LayoutFromBinDir(BuildBin(), ctx.env);
  }
};

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "numtrace-launcher-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace numtrace::launcher::testing

#endif  // NUMTRACE_TEST_LAUNCHER_LAUNCHER_TEST_UTIL_H_
