// File: test/shim/cupti/preload_quiet_test.cc
//
// libnumtrace.so preloaded into programs that never use a GPU (python3, sh)
// must change nothing: same stdout, same (empty) stderr, same exit code, no
// file in the working or output folder. The constructor's one visible effect
// is CUDA_INJECTION64_PATH pointing at the library for child processes,
// checked here too because the lazy start depends on it. On this machine a
// CUDA program finds no driver: it must fail exactly as without the shim.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "test/util/test_paths.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string out, err;
};

class PreloadQuietTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_ = std::string(NUMTRACE_BINARY_DIR) + "/lib/libnumtrace.so";
    ASSERT_TRUE(fs::exists(lib_)) << lib_;
    dir_ = fs::temp_directory_path() / ("numtrace_preload_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cwd");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `command` in dir_/cwd, with or without the shim; output dir dir_/out.
  Outcome Run(const std::string& command, bool preload, const std::string& extra_env = "") {
    std::string env = "env -u CUDA_INJECTION64_PATH " + extra_env + " NUMTRACE_OUTPUT_DIR='" +
                      (dir_ / "out").string() + "' ";
    if (preload) env += "LD_PRELOAD='" + lib_ + "' ";
    std::string full = "cd '" + (dir_ / "cwd").string() + "' && " + env + command + " >'" +
                       (dir_ / "o").string() + "' 2>'" + (dir_ / "e").string() + "'";
    int status = std::system(full.c_str());
    Outcome r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir_ / "o"), Slurp(dir_ / "e")};
    fs::remove(dir_ / "o");
    fs::remove(dir_ / "e");
    return r;
  }

  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  void ExpectSame(const std::string& command) {
    Outcome plain = Run(command, false);
    Outcome shim = Run(command, true);
    EXPECT_EQ(plain.code, shim.code) << command;
    EXPECT_EQ(plain.out, shim.out) << command;
    EXPECT_EQ(plain.err, shim.err) << command;
    EXPECT_TRUE(fs::is_empty(dir_ / "cwd")) << "files appeared in the working folder: " << command;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << "output folder created: " << command;
  }

  std::string lib_;
  fs::path dir_;
};

TEST_F(PreloadQuietTest, PythonPrintIsUntouched) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  ExpectSame("python3 -c 'import sys; print(1); print(\"e\", file=sys.stderr)'");
  Outcome r = Run("python3 -c 'print(1)'", true);
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(PreloadQuietTest, ShellExitCodeIsUntouched) {
  ExpectSame("sh -c 'exit 3'");
  EXPECT_EQ(Run("sh -c 'exit 3'", true).code, 3);
  ExpectSame("sh -c 'echo out; echo err >&2; exit 0'");
}

TEST_F(PreloadQuietTest, ConstructorPointsCudaInjectionAtItself) {
  Outcome r = Run("sh -c 'echo \"$CUDA_INJECTION64_PATH\"'", true);
  EXPECT_EQ(r.out, fs::canonical(lib_).string() + "\n");
  EXPECT_EQ(r.err, "");
  Outcome plain = Run("sh -c 'echo \"$CUDA_INJECTION64_PATH\"'", false);
  EXPECT_EQ(plain.out, "\n");
}

TEST_F(PreloadQuietTest, DisabledShimSetsNothing) {
  Outcome r = Run("sh -c 'echo \"$CUDA_INJECTION64_PATH\"'", true, "NUMTRACE_ENABLE=0");
  EXPECT_EQ(r.out, "\n") << "NUMTRACE_ENABLE=0 must leave the environment alone";
}

TEST_F(PreloadQuietTest, CudaProgramWithoutDriverFailsAsBefore) {
  std::string program = std::string(NUMTRACE_BINARY_DIR) + "/test-bin/mlp_train";
  if (!fs::exists(program)) GTEST_SKIP() << "mlp_train not built";
  if (std::system("test -e /dev/nvidia0") == 0) GTEST_SKIP() << "a GPU is present: see shim_gpu_test";
  ExpectSame("'" + program + "' --steps 1");
}

}  // namespace
