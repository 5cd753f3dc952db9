// File: test/gpu/shim/gpu_env.cc
//
// GPU detection, paths and a process runner for the GPU tests; see gpu_env.h.
#include "test/gpu/shim/gpu_env.h"
#include "test/util/test_paths.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace numtrace::gpu_test {
namespace fs = std::filesystem;

bool GpuAvailable(std::string* why) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) {
    *why = "no NVIDIA driver (libcuda.so.1 not loadable): GPU test skipped";
    return false;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(cuda, "cuDeviceGetCount"));
  int n = 0;
  if (init == nullptr || count == nullptr || init(0) != 0 || count(&n) != 0 || n == 0) {
    *why = "NVIDIA driver present but no usable GPU (cuInit/cuDeviceGetCount failed): GPU test skipped";
    return false;
  }
  return true;
}

namespace {
std::string Bundle() {
  const char* b = std::getenv("NUMTRACE_GPU_BUNDLE");
  return b ? std::string(b) : std::string();
}
}  // namespace

std::string Sample(const std::string& name) {
  return Bundle().empty() ? std::string(NUMTRACE_BINARY_DIR) + "/test-bin/" + name
                          : Bundle() + "/bin/" + name;
}
std::string ShimLibrary() {
  return Bundle().empty() ? std::string(NUMTRACE_BINARY_DIR) + "/lib/libnumtrace.so"
                          : Bundle() + "/lib/libnumtrace.so";
}
std::string DiffTool() {
  return Bundle().empty() ? std::string(NUMTRACE_BINARY_DIR) + "/bin/numtrace-diff"
                          : Bundle() + "/bin/numtrace-diff";
}

RunResult RunCommand(const std::string& command, const std::map<std::string, std::string>& env) {
  std::string dir = MakeTempDir("run");
  std::string prefix;
  for (const auto& [k, v] : env) prefix += k + "='" + v + "' ";
  std::string full = prefix + command + " >" + dir + "/out 2>" + dir + "/err";
  RunResult r;
  int status = std::system(full.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(dir + "/out");
  r.err = ReadFile(dir + "/err");
  fs::remove_all(dir);
  return r;
}

std::string MakeTempDir(const std::string& tag) {
  static int counter = 0;
  fs::path p = fs::temp_directory_path() /
               ("numtrace_gpu_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string FindTrace(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 13 && name.compare(name.size() - 13, 13, ".ntrace.jsonl") == 0) {
      return e.path().string();
    }
  }
  return {};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string JsonString(const std::string& json, const std::string& key, const std::string& after) {
  size_t from = 0;
  if (!after.empty()) {
    from = json.find(after);
    if (from == std::string::npos) return {};
  }
  std::string needle = "\"" + key + "\":\"";
  size_t at = json.find(needle, from);
  if (at == std::string::npos) return {};
  at += needle.size();
  size_t end = json.find('"', at);
  return end == std::string::npos ? std::string() : json.substr(at, end - at);
}

}  // namespace numtrace::gpu_test
