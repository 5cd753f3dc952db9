// File: test/util/scratch_dir.h
//
// Files for tests that write and read real files: a fresh scratch directory
// per test (named after the tag, the process and the running gtest, so
// `ctest -j` runs and reruns never see each other's files), and whole-file
// read/write. Header-only; any test target may include it.
//
// Example:
//   std::filesystem::path dir = FreshTestDir("cli");  // /tmp/numtrace_cli_<pid>_<Suite.Test>
//   WriteFileText(dir / "a.jsonl", text);
//   EXPECT_EQ(ReadFileText(dir / "a.jsonl"), text);
#ifndef NUMTRACE_TEST_UTIL_SCRATCH_DIR_H_
#define NUMTRACE_TEST_UTIL_SCRATCH_DIR_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace numtrace::testing {

// Removes whatever a previous run left, then creates the directory.
inline std::filesystem::path FreshTestDir(std::string_view tag) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "numtrace_" + std::string(tag) + "_" + std::to_string(::getpid());
  if (info != nullptr) name += std::string("_") + info->test_suite_name() + "." + info->name();
  std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The whole file, bytes as they are; "" when it cannot be opened.
inline std::string ReadFileText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFileText(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace numtrace::testing

#endif  // NUMTRACE_TEST_UTIL_SCRATCH_DIR_H_
