// File: bench/analyzer/trace_reader_benchmark.cc
//
// numtrace-bench-read: Google Benchmark timings of the analyzer's importers
// on generated pairs (trace format v1 and DebugMode logs), reported as bytes
// per second so they compare directly with numtrace-simdjson-floor. The
// end-to-end numbers (diff wall time, peak RSS) come from
// scripts/bench-analyzer.sh; this isolates the parse stage.
//
// Example:
//   numtrace-bench-read --benchmark_filter=Trace --kernels=50000
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analyzer/read/importer.h"
#include "bench/analyzer/debugmode_pair_generator.h"
#include "bench/analyzer/step_plan.h"
#include "bench/analyzer/trace_pair_generator.h"
#include "benchmark/benchmark.h"

namespace {

namespace fs = std::filesystem;

uint64_t g_kernels = 20000;
fs::path g_dir;

void BM_ReadTraceFile(benchmark::State& state) {
  const std::string path = (g_dir / "a.ntrace.jsonl").string();
  const auto bytes = static_cast<int64_t>(fs::file_size(path));
  for (auto _ : state) {
    auto trace = numtrace::analyzer::ReadTrace(path, numtrace::analyzer::FindImporter("numtrace"));
    if (!trace.ok()) {
      state.SkipWithError(std::string(trace.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(trace->kernels.data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["kernels"] = static_cast<double>(g_kernels);
}
BENCHMARK(BM_ReadTraceFile)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadDebugModeLog(benchmark::State& state) {
  const std::string path = (g_dir / "rank_0_activations.log").string();
  const auto bytes = static_cast<int64_t>(fs::file_size(path));
  for (auto _ : state) {
    auto trace = numtrace::analyzer::ReadTrace(path, numtrace::analyzer::FindImporter("debugmode-log"));
    if (!trace.ok()) {
      state.SkipWithError(std::string(trace.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(trace->kernels.data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_ReadDebugModeLog)->Unit(benchmark::kMillisecond)->UseRealTime();

// Writes the inputs once; returns false (after saying why) when it cannot.
bool Generate() {
  g_dir = fs::temp_directory_path() / ("numtrace-bench-read-" + std::to_string(getpid()));
  fs::create_directories(g_dir);
  auto plan = numtrace::bench::LoadStepPlan(NUMTRACE_KERNEL_NAMES_DIR, 0);
  if (!plan.ok()) {
    std::fprintf(stderr, "numtrace-bench-read: %s\n", std::string(plan.status().message()).c_str());
    return false;
  }
  numtrace::bench::PairOptions opt;
  opt.kernels = g_kernels;
  auto a = numtrace::bench::WriteTracePair(*plan, opt, (g_dir / "a.ntrace.jsonl").string(),
                                           (g_dir / "b.ntrace.jsonl").string());
  opt.kernels = g_kernels / 2;  // ops are ~4x smaller than kernel lines
  auto d = numtrace::bench::WriteDebugModePair(opt, (g_dir / "rank_0_activations.log").string(),
                                               (g_dir / "b_activations.log").string());
  if (!a.ok() || !d.ok()) {
    std::fprintf(stderr, "numtrace-bench-read: cannot write inputs under %s\n", g_dir.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // --kernels=N is ours; everything else goes to Google Benchmark.
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--kernels=", 0) == 0) {
      g_kernels = std::strtoull(arg.c_str() + 10, nullptr, 10);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  benchmark::Initialize(&argc, argv);
  if (!Generate()) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  fs::remove_all(g_dir, ec);
  return 0;
}
