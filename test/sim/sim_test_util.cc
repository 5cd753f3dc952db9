#include "test/sim/sim_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "analyzer/read/importer.h"

namespace numtrace::sim {

std::string FreshDir(const std::string& name) {
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "numtrace-sim-test" /
                              (std::string(info->test_suite_name()) + "." + info->name()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

SimRun RunWithEnv(const MlpOptions& o, Env env, const std::string& out_dir) {
  env["NUMTRACE_OUTPUT_DIR"] = out_dir;
  return RunSimulation(o, [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

analyzer::Trace ReadRun(const SimRun& run) {
  EXPECT_FALSE(run.trace_path.empty()) << "the run left no trace";
  auto trace = analyzer::ReadTrace(run.trace_path, analyzer::FindImporter("numtrace"));
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? std::move(*trace) : analyzer::Trace{};
}

}  // namespace numtrace::sim
