// File: test/shim/cupti/callback_switchboard_test.cc
//
// The switchboard driven directly with fake CUpti_CallbackData (kineto's
// CuptiCallbackApiTest habit): what reaches the EventSink, when, and what
// never does (failed launches, our own calls, callbacks before the engine).
#include "shim/cupti/callback_switchboard.h"

#include <cuda.h>
#include <generated_nvtx_meta.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "shim/cupti/launch_capture_state.h"
#include "shim/cupti/self_call_guard.h"

namespace numtrace::shim {
namespace {

class FakeQueries : public DriverQueries {
 public:
  bool Describe(uint64_t function, KernelInfo* out) override {
    ++describe_calls;
    if (function == 0xBAD) return false;
    out->name = "driver_name";
    out->layout = {{0, 8}, {8, 4}};
    out->param_bytes = 12;
    return true;
  }
  bool IsCapturing(uint64_t stream) override {
    ++capture_queries;
    return stream == capturing_stream;
  }
  int DeviceOf(uint64_t context) override { return context == 0xC1 ? 1 : 0; }

  int describe_calls = 0;
  int capture_queries = 0;
  uint64_t capturing_stream = 0;
};

struct SeenLaunch {
  std::string symbol;
  uint64_t stream;
  int device;
  bool capturing;
  std::vector<uint8_t> params;
  size_t slots;
};

class FakeSink : public EventSink {
 public:
  void OnLaunchEnter(const LaunchEvent& e) override {
    enters.push_back(Copy(e));
    known.push_back(LaunchCaptureState::Known(e.stream));
  }
  void OnLaunch(const LaunchEvent& e) override {
    exits.push_back(Copy(e));
    known.push_back(LaunchCaptureState::Known(e.stream));
  }
  void OnAlloc(const AllocEvent& a) override { allocs.push_back(a); }
  void OnFree(const FreeEvent& f) override { frees.push_back(f); }
  void OnGraphLaunch(const GraphLaunchEvent& g) override { graphs.push_back(g); }
  void OnStepMark() override {}
  void OnCaptureBegin() override {}
  void OnCaptureEnd() override {}
  void OnProfilerStart() override { ++profiler_starts; }
  void OnProfilerStop() override { ++profiler_stops; }
  void OnRangePush(std::string_view name) override { ranges.push_back("push " + std::string(name)); }
  void OnRangePop() override { ranges.push_back("pop"); }
  void Shutdown() override {}
  bool Quiet() const override { return quiet; }

  static SeenLaunch Copy(const LaunchEvent& e) {
    return {std::string(e.symbol), e.stream, e.device, e.stream_capturing,
            std::vector<uint8_t>(e.params.begin(), e.params.end()), e.layout.size()};
  }

  std::vector<SeenLaunch> enters, exits;
  std::vector<AllocEvent> allocs;
  std::vector<FreeEvent> frees;
  std::vector<GraphLaunchEvent> graphs;
  int profiler_starts = 0, profiler_stops = 0;
  std::vector<std::optional<bool>> known;  // capture status visible to the device, per call
  std::vector<std::string> ranges;
  bool quiet = false;
};

// One launch's callback pair, as CUPTI would deliver it.
struct FakeLaunch {
  uint64_t out = 0x7f00deadbeef;
  int n = 77;
  void* ptrs[2] = {&out, &n};
  cuLaunchKernel_params params{};
  CUresult result = CUDA_SUCCESS;
  CUpti_CallbackData data{};

  explicit FakeLaunch(uint64_t function, CUstream stream = nullptr) {
    params.f = reinterpret_cast<CUfunction>(function);
    params.gridDimX = params.gridDimY = params.gridDimZ = 1;
    params.blockDimX = 32;
    params.blockDimY = params.blockDimZ = 1;
    params.hStream = stream;
    params.kernelParams = ptrs;
    data.functionParams = &params;
    data.functionReturnValue = &result;
    data.symbolName = "_Z6kernelPfi";
    data.context = reinterpret_cast<CUcontext>(0xC1);
  }
  const CUpti_CallbackData* At(CUpti_ApiCallbackSite site) {
    data.callbackSite = site;
    return &data;
  }
};

constexpr auto kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr auto kLaunch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;

TEST(CallbackSwitchboard, LaunchReachesSinkAtEnterAndExit) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000);
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_ENTER));
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  ASSERT_EQ(sink.enters.size(), 1u);
  ASSERT_EQ(sink.exits.size(), 1u);
  const SeenLaunch& e = sink.exits[0];
  EXPECT_EQ(e.symbol, "_Z6kernelPfi");
  EXPECT_EQ(e.stream, 0x1u) << "NULL stream on a plain id is the legacy stream";
  EXPECT_EQ(e.device, 1);
  EXPECT_FALSE(e.capturing);
  ASSERT_EQ(e.params.size(), 12u);
  uint64_t out;
  std::memcpy(&out, e.params.data(), 8);
  EXPECT_EQ(out, 0x7f00deadbeefu);
  EXPECT_EQ(e.slots, 2u);
  EXPECT_EQ(sink.enters[0].params, e.params);
  EXPECT_EQ(board.counters().launches.load(), 1u);
}

TEST(CallbackSwitchboard, DescribesEachFunctionOnce) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  for (int i = 0; i < 5; ++i) {
    FakeLaunch l(0x2000);
    board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  }
  EXPECT_EQ(sink.exits.size(), 5u);
  EXPECT_EQ(q.describe_calls, 1);
}

TEST(CallbackSwitchboard, FailedLaunchIsNotReported) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000);
  l.result = CUDA_ERROR_INVALID_VALUE;
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  EXPECT_TRUE(sink.exits.empty());
}

TEST(CallbackSwitchboard, UndescribedKernelStillCountsWithoutParams) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0xBAD);
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  ASSERT_EQ(sink.exits.size(), 1u);
  EXPECT_TRUE(sink.exits[0].params.empty());
  EXPECT_EQ(sink.exits[0].slots, 0u);
  EXPECT_EQ(board.counters().undescribed.load(), 1u);
}

TEST(CallbackSwitchboard, CapturingStreamAndPerThreadIds) {
  FakeQueries q;
  q.capturing_stream = 0x2;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000);
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, l.At(CUPTI_API_EXIT));
  ASSERT_EQ(sink.exits.size(), 1u);
  EXPECT_EQ(sink.exits[0].stream, 0x2u);
  EXPECT_TRUE(sink.exits[0].capturing);
}

TEST(CallbackSwitchboard, OwnCallsAreInvisible) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000);
  {
    SelfCallGuard guard;
    board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  }
  EXPECT_TRUE(sink.exits.empty());
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  EXPECT_EQ(sink.exits.size(), 1u);
}

FakeSink* g_started_sink = nullptr;
int g_start_calls = 0;
uint64_t g_start_context = 0;
EventSink* StartHook(uint64_t context) {
  ++g_start_calls;
  g_start_context = context;
  EXPECT_TRUE(SelfCallGuard::Active()) << "engine start runs with our calls hidden";
  return g_started_sink;
}

TEST(CallbackSwitchboard, FirstContextStartsEngineOnce) {
  FakeQueries q;
  FakeSink sink;
  g_started_sink = &sink;
  g_start_calls = 0;
  CallbackSwitchboard board(&q, {.start = &StartHook});
  CUpti_ResourceData r{};
  r.context = reinterpret_cast<CUcontext>(0xC7);
  board.Dispatch(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
  board.Dispatch(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
  EXPECT_EQ(g_start_calls, 1);
  EXPECT_EQ(g_start_context, 0xC7u);
  FakeLaunch l(0x1000);
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  EXPECT_EQ(sink.exits.size(), 1u);
}

TEST(CallbackSwitchboard, InertEngineDropsEverything) {
  FakeQueries q;
  g_started_sink = nullptr;
  g_start_calls = 0;
  CallbackSwitchboard board(&q, {.start = &StartHook});
  FakeLaunch l(0x1000);
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  EXPECT_EQ(g_start_calls, 1) << "start is tried once, at the first event";
  EXPECT_EQ(board.counters().launches.load(), 0u);
}

TEST(CallbackSwitchboard, AllocFreeGraphAndProfiler) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  CUresult ok = CUDA_SUCCESS;
  CUpti_CallbackData d{};
  d.callbackSite = CUPTI_API_EXIT;
  d.functionReturnValue = &ok;
  d.context = reinterpret_cast<CUcontext>(0xC1);

  CUdeviceptr ptr = 0x5000;
  cuMemAlloc_v2_params a{&ptr, 4096};
  d.functionParams = &a;
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &d);
  cuMemFree_v2_params f{0x5000};
  d.functionParams = &f;
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &d);
  cuGraphLaunch_params g{reinterpret_cast<CUgraphExec>(0x88), nullptr};
  d.functionParams = &g;
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &d);
  d.functionParams = nullptr;
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, &d);
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, &d);
  d.callbackSite = CUPTI_API_ENTER;  // ENTER of a free: nothing yet
  d.functionParams = &f;
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &d);

  ASSERT_EQ(sink.allocs.size(), 1u);
  EXPECT_EQ(sink.allocs[0].address, 0x5000u);
  EXPECT_EQ(sink.allocs[0].device, 1);
  ASSERT_EQ(sink.frees.size(), 1u);
  ASSERT_EQ(sink.graphs.size(), 1u);
  EXPECT_EQ(sink.graphs[0].graph_exec, 0x88u);
  EXPECT_EQ(sink.profiler_starts, 1);
  EXPECT_EQ(sink.profiler_stops, 1);
}

TEST(CallbackSwitchboard, IgnoresUnknownIdsAndDomains) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000);
  board.Dispatch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, l.At(CUPTI_API_EXIT));
  board.Dispatch(kDriver, 100000, l.At(CUPTI_API_EXIT));
  board.Dispatch(CUPTI_CB_DOMAIN_RUNTIME_API, 1, l.At(CUPTI_API_EXIT));
  board.Dispatch(kDriver, kLaunch, nullptr);
  EXPECT_TRUE(sink.exits.empty());
}

TEST(CallbackSwitchboard, EnablesEveryLaunchAndAllocId) {
  auto ids = CallbackSwitchboard::DriverIds();
  for (uint32_t want : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
                        CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStop}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), want), ids.end()) << want;
  }
}

TEST(CallbackSwitchboard, CaptureStatusIsQueriedOncePerLaunch) {
  FakeQueries q;
  q.capturing_stream = 0x99;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000, reinterpret_cast<CUstream>(0x99));
  l.data.correlationId = 41;
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_ENTER));
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  EXPECT_EQ(q.capture_queries, 1) << "EXIT reuses ENTER's answer";
  ASSERT_EQ(sink.exits.size(), 1u);
  EXPECT_TRUE(sink.exits[0].capturing);
  ASSERT_EQ(sink.known.size(), 2u);
  EXPECT_EQ(sink.known[0], std::optional<bool>(true)) << "the device sees the answer at ENTER";
  EXPECT_EQ(sink.known[1], std::optional<bool>(true)) << "and at EXIT";
  EXPECT_FALSE(LaunchCaptureState::Known(0x99).has_value()) << "only inside the callback";

  q.capturing_stream = 0;  // the capture ended: the next launch must ask again
  FakeLaunch next(0x1000, reinterpret_cast<CUstream>(0x99));
  next.data.correlationId = 42;
  board.Dispatch(kDriver, kLaunch, next.At(CUPTI_API_ENTER));
  board.Dispatch(kDriver, kLaunch, next.At(CUPTI_API_EXIT));
  EXPECT_EQ(q.capture_queries, 2);
  EXPECT_FALSE(sink.exits.back().capturing);
}

TEST(CallbackSwitchboard, QuietSinkGetsCountedLaunchesWithoutDecoding) {
  FakeQueries q;
  FakeSink sink;
  sink.quiet = true;  // outside the captured steps
  CallbackSwitchboard board(&q, {});
  board.SetSink(&sink);
  FakeLaunch l(0x1000, reinterpret_cast<CUstream>(0x99));
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_ENTER));
  board.Dispatch(kDriver, kLaunch, l.At(CUPTI_API_EXIT));
  EXPECT_EQ(q.capture_queries, 0) << "no driver call for a launch nobody measures";
  ASSERT_EQ(sink.enters.size(), 1u);
  ASSERT_EQ(sink.exits.size(), 1u);
  EXPECT_EQ(sink.exits[0].symbol, "_Z6kernelPfi");
  EXPECT_EQ(sink.exits[0].stream, 0x99u);
  EXPECT_TRUE(sink.exits[0].params.empty());
  EXPECT_EQ(sink.exits[0].slots, 0u);
  EXPECT_EQ(board.counters().launches.load(), 1u);

  sink.quiet = false;  // a captured step began: full decoding again
  FakeLaunch next(0x1000, reinterpret_cast<CUstream>(0x99));
  next.data.correlationId = 7;
  board.Dispatch(kDriver, kLaunch, next.At(CUPTI_API_ENTER));
  board.Dispatch(kDriver, kLaunch, next.At(CUPTI_API_EXIT));
  EXPECT_EQ(q.capture_queries, 1);
  EXPECT_EQ(sink.exits.back().params.size(), 12u);
}

TEST(CallbackSwitchboard, NvtxRangesReachTheSinkOnceStarted) {
  FakeQueries q;
  FakeSink sink;
  CallbackSwitchboard board(&q, {});
  nvtxRangePushA_params push{"step 3"};
  CUpti_NvtxData data{"nvtxRangePushA", &push, nullptr};
  board.Dispatch(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  EXPECT_TRUE(sink.ranges.empty()) << "no sink yet: dropped, and no engine start from NVTX";
  board.SetSink(&sink);
  board.Dispatch(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  nvtxRangePop_params pop{};
  CUpti_NvtxData pop_data{"nvtxRangePop", &pop, nullptr};
  board.Dispatch(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &pop_data);
  board.Dispatch(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxMarkA, &data);  // not a range
  EXPECT_EQ(sink.ranges, (std::vector<std::string>{"push step 3", "pop"}));
  EXPECT_EQ(board.counters().ranges.load(), 2u);
}

int g_created = 0;
uint64_t g_created_ctx = 0;
FakeSink* g_start_sink = nullptr;
EventSink* StartWith(uint64_t) { return g_start_sink; }
void Created(uint64_t ctx) {
  ++g_created;
  g_created_ctx = ctx;
}

TEST(CallbackSwitchboard, LaterContextsArePreparedThroughTheHook) {
  FakeQueries q;
  FakeSink sink;
  g_start_sink = &sink;
  g_created = 0;
  CallbackSwitchboard board(&q, {.start = &StartWith, .context_created = &Created});
  CUpti_ResourceData first{};
  first.context = reinterpret_cast<CUcontext>(0xC1);
  board.Dispatch(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &first);
  EXPECT_EQ(g_created, 0) << "the first context is prepared by the start hook";
  CUpti_ResourceData second{};
  second.context = reinterpret_cast<CUcontext>(0xC2);
  board.Dispatch(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &second);
  EXPECT_EQ(g_created, 1);
  EXPECT_EQ(g_created_ctx, 0xC2u);
}

}  // namespace
}  // namespace numtrace::shim
