// The host reduction's throughput (operator level measures CPU tensors with
// it) on one thread and on every core the process may use, against a
// memcpy of the same bytes: build/bin/numtrace_host_reduce_bench.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "shim/reduce/host_reduce.h"

namespace numtrace::shim {
namespace {

constexpr size_t kBytes = 64u << 20;

std::vector<float>& Buffer() {
  static std::vector<float> v = [] {
    std::vector<float> x(kBytes / 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000) * 0.37f - 100.0f;
    return x;
  }();
  return v;
}

// Arg 0: f32, 1: raw bytes; arg 1: threads (0 = every core).
void BM_ReduceHost(benchmark::State& state) {
  const std::vector<float>& v = Buffer();
  const DType dtype = state.range(0) == 0 ? DType::kF32 : DType::kRaw;
  const unsigned threads = state.range(1) == 0 ? HostReduceThreads() : static_cast<unsigned>(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(ReduceHost(v.data(), kBytes, dtype, threads));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_ReduceHost)->Args({0, 1})->Args({0, 0})->Args({1, 1})->Args({1, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Memcpy(benchmark::State& state) {
  const std::vector<float>& v = Buffer();
  std::vector<float> out(v.size());
  for (auto _ : state) {
    std::memcpy(out.data(), v.data(), kBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace numtrace::shim

BENCHMARK_MAIN();
