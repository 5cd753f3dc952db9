// File: bench/shim/switchboard_bench.cc
//
// What the CUPTI layer's own dispatch costs a launch outside the captured
// steps (the quiet path), with fake callback data and a sink that only says
// Quiet(): a driver launch alone (ENTER + EXIT), and the same launch nested
// in a runtime launch as CUDA 13 delivers `<<<>>>` when both domains are
// enabled (four dispatches: the runtime witness frames included). CUPTI's
// own cost per callback comes on top and is measured on the GPU only
// (scripts/gpu-check.sh, "bench launch_us").
//
// Example:
//   build/bin/numtrace_switchboard_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <cuda.h>

#include "shim/cupti/callback_switchboard.h"
#include "shim/engine/null_sink.h"

namespace numtrace::shim {
namespace {

class QuietSink : public NullSink {
 public:
  void OnLaunch(const LaunchEvent&) override { ++launches; }
  bool Quiet() const override { return true; }
  uint64_t launches = 0;
};

class FixedQueries : public DriverQueries {
 public:
  bool Describe(uint64_t, HandleKind, KernelDescription* out) override {
    out->layout = {{0, 8}, {8, 4}};
    out->param_bytes = 12;
    return true;
  }
  bool IsCapturing(uint64_t) override { return false; }
  int DeviceOf(uint64_t) override { return 0; }
};

struct Launch {
  cuLaunchKernel_params driver{};
  cudaLaunchKernel_v7000_params runtime{};
  CUresult ok = CUDA_SUCCESS;
  int rt_ok = 0;
  CUpti_CallbackData d{}, r{};
  Launch() {
    driver.f = reinterpret_cast<CUfunction>(0x1000);
    driver.gridDimX = driver.gridDimY = driver.gridDimZ = 1;
    driver.blockDimX = driver.blockDimY = driver.blockDimZ = 1;
    d.functionParams = &driver;
    d.functionReturnValue = &ok;
    d.symbolName = "_Z6kernelPfi";
    d.correlationId = 7;
    r.functionParams = &runtime;
    r.functionReturnValue = &rt_ok;
    r.symbolName = "_Z6kernelPfi";
    r.correlationId = 7;
  }
};

void BM_QuietDriverLaunch(benchmark::State& state) {
  FixedQueries q;
  QuietSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  Launch l;
  for (auto _ : state) {
    l.d.callbackSite = CUPTI_API_ENTER;
    board.Dispatch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &l.d);
    l.d.callbackSite = CUPTI_API_EXIT;
    board.Dispatch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &l.d);
  }
  benchmark::DoNotOptimize(sink.launches);
}
BENCHMARK(BM_QuietDriverLaunch);

void BM_QuietRuntimeLaunchWithNestedDriver(benchmark::State& state) {
  FixedQueries q;
  QuietSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  Launch l;
  constexpr uint32_t kRuntime = CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
  for (auto _ : state) {
    l.r.callbackSite = CUPTI_API_ENTER;
    board.Dispatch(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntime, &l.r);
    l.d.callbackSite = CUPTI_API_ENTER;
    board.Dispatch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &l.d);
    l.d.callbackSite = CUPTI_API_EXIT;
    board.Dispatch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &l.d);
    l.r.callbackSite = CUPTI_API_EXIT;
    board.Dispatch(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntime, &l.r);
  }
  benchmark::DoNotOptimize(sink.launches);
}
BENCHMARK(BM_QuietRuntimeLaunchWithNestedDriver);

}  // namespace
}  // namespace numtrace::shim

BENCHMARK_MAIN();
