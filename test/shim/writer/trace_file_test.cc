#include "shim/writer/trace_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

namespace numtrace::shim {
namespace {

std::function<const char*(const char*)> Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(TraceFileTest, RankComesFromTheFirstLauncherVariableSet) {
  EXPECT_EQ(RankFromEnv(Env({})), 0);
  EXPECT_EQ(RankFromEnv(Env({{"OMPI_COMM_WORLD_RANK", "4"}})), 4);
  EXPECT_EQ(RankFromEnv(Env({{"SLURM_PROCID", "3"}, {"OMPI_COMM_WORLD_RANK", "4"}})), 3);
  EXPECT_EQ(RankFromEnv(Env({{"LOCAL_RANK", "2"}, {"SLURM_PROCID", "3"}})), 2);
  EXPECT_EQ(RankFromEnv(Env({{"RANK", "7"}, {"LOCAL_RANK", "2"}})), 7);
  EXPECT_EQ(RankFromEnv(Env({{"RANK", "x"}, {"LOCAL_RANK", "2"}})), 2);  // junk is skipped
  EXPECT_EQ(RankFromEnv(Env({{"RANK", "-1"}})), 0);
}

TEST(TraceFileTest, SecondProcessOfARankGetsItsPid) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("numtrace_tf_" + std::to_string(getpid())) / "nested" / "out";
  std::filesystem::remove_all(dir.parent_path().parent_path());
  std::string path, error;
  int fd = CreateTraceFile(dir.string(), 1, 4242, &path, &error);
  ASSERT_GE(fd, 0) << error;
  EXPECT_EQ(path, dir.string() + "/rank_1.ntrace.jsonl");
  ASSERT_TRUE(WriteAll(fd, "first\n"));
  close(fd);
  fd = CreateTraceFile(dir.string(), 1, 4242, &path, &error);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(path, dir.string() + "/rank_1.pid4242.ntrace.jsonl");
  close(fd);
  fd = CreateTraceFile(dir.string(), 1, 4242, &path, &error);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(path, dir.string() + "/rank_1.pid4242.1.ntrace.jsonl");
  close(fd);
  EXPECT_EQ(std::filesystem::file_size(dir / "rank_1.ntrace.jsonl"), 6u);  // never overwritten
  std::filesystem::remove_all(dir.parent_path().parent_path());
}

TEST(TraceFileTest, UnusableDirectoryIsReportedInOneLine) {
  std::string path, error;
  EXPECT_EQ(CreateTraceFile("/proc/self/numtrace_cannot_be_here", 0, 1, &path, &error), -1);
  EXPECT_NE(error.find("/proc/self/numtrace_cannot_be_here"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace numtrace::shim
