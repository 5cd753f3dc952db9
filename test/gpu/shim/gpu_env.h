// File: test/gpu/shim/gpu_env.h
//
// What the GPU tests need to find and run: whether a usable GPU is here
// (libcuda.so.1 loads, cuInit succeeds, one device), where the built
// programs are (the build tree, or the gpu-bundle/ folder through
// NUMTRACE_GPU_BUNDLE), and a small process runner. Without a GPU every
// test skips with the reason GpuAvailable gives.
//
// Example:
//   std::string why;
//   if (!GpuAvailable(&why)) GTEST_SKIP() << why;
//   RunResult r = RunCommand(Sample("mlp_train") + " --steps 2", {{"LD_PRELOAD", ShimLibrary()}});
#ifndef NUMTRACE_TEST_GPU_SHIM_GPU_ENV_H_
#define NUMTRACE_TEST_GPU_SHIM_GPU_ENV_H_

#include <map>
#include <string>

namespace numtrace::gpu_test {

// True when a driver and at least one GPU are usable; else `*why` says why.
bool GpuAvailable(std::string* why);

// Paths: $NUMTRACE_GPU_BUNDLE/{bin,lib}/... when set, else the build tree.
std::string Sample(const std::string& name);  // mlp_train, empty_kernels
std::string ShimLibrary();                    // libnumtrace.so
std::string DiffTool();                       // numtrace-diff

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs `command` through /bin/sh with extra environment variables.
RunResult RunCommand(const std::string& command, const std::map<std::string, std::string>& env = {});

// A fresh empty folder under the temp dir.
std::string MakeTempDir(const std::string& tag);
// The first *.ntrace.jsonl file in `dir`, or "".
std::string FindTrace(const std::string& dir);
std::string ReadFile(const std::string& path);
// The string value of the first "key":"value" after `after` (or anywhere).
std::string JsonString(const std::string& json, const std::string& key, const std::string& after = "");

}  // namespace numtrace::gpu_test

#endif  // NUMTRACE_TEST_GPU_SHIM_GPU_ENV_H_
