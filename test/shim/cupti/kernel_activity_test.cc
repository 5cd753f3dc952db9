// File: test/shim/cupti/kernel_activity_test.cc
//
// The activity glue over a fake CUPTI: records in a buffer reach the check
// through cuptiActivityGetNextRecord, Finish reports unmeasured kernels to
// the sink and the footer counters, and a CUPTI that refuses activity is
// reported once (counter activity_unavailable) without stopping anything.
#include "shim/cupti/kernel_activity.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "shim/cupti/cupti_api.h"
#include "shim/engine/capture_counters.h"

namespace numtrace::shim {
namespace {

// The fake buffer is an array of records of these two sizes, in order.
struct FakeBuffer {
  std::vector<CUpti_ActivityKernel10> kernels;
  CUpti_ActivityAPI internal{};
  bool has_internal = false;
};
FakeBuffer* g_buffer = nullptr;
size_t g_next = 0;
CUptiResult g_enable_result = CUPTI_SUCCESS;
int g_flushes = 0;

CUptiResult Next(uint8_t*, size_t, CUpti_Activity** record) {
  size_t total = g_buffer->kernels.size() + (g_buffer->has_internal ? 1 : 0);
  if (g_next >= total) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  size_t i = g_next++;
  *record = i < g_buffer->kernels.size()
                ? reinterpret_cast<CUpti_Activity*>(&g_buffer->kernels[i])
                : reinterpret_cast<CUpti_Activity*>(&g_buffer->internal);
  return CUPTI_SUCCESS;
}
CUptiResult Register(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) {
  return CUPTI_SUCCESS;
}
CUptiResult Enable(CUpti_ActivityKind k) {
  return k == CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API ? g_enable_result : CUPTI_SUCCESS;
}
CUptiResult Disable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }
uint32_t g_last_flush_flag = 99;
CUptiResult Flush(uint32_t flag) {
  g_last_flush_flag = flag;
  ++g_flushes;
  return CUPTI_SUCCESS;
}
CUptiResult Dropped(CUcontext, uint32_t, size_t* n) { *n = 0; return CUPTI_SUCCESS; }

CuptiApi FakeApi() {
  CuptiApi api;
  api.cuptiActivityRegisterCallbacks = &Register;
  api.cuptiActivityEnable = &Enable;
  api.cuptiActivityDisable = &Disable;
  api.cuptiActivityFlushAll = &Flush;
  api.cuptiActivityGetNextRecord = &Next;
  api.cuptiActivityGetNumDroppedRecords = &Dropped;
  return api;
}

CUpti_ActivityKernel10 Kernel(uint32_t correlation, const char* name, uint32_t graph = 0) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = correlation;
  k.name = name;
  k.graphId = graph;
  return k;
}

struct Unmeasured {
  std::string name;
  uint64_t count;
  bool in_graph;
};
class RecordingSink : public EventSink {
 public:
  void OnLaunch(const LaunchEvent&) override {}
  void OnAlloc(const AllocEvent&) override {}
  void OnFree(const FreeEvent&) override {}
  void OnGraphLaunch(const GraphLaunchEvent&) override {}
  void OnStepMark() override {}
  void OnCaptureBegin() override {}
  void OnCaptureEnd() override {}
  void OnProfilerStart() override {}
  void OnProfilerStop() override {}
  void OnRangePush(std::string_view) override {}
  void OnRangePop() override {}
  void Shutdown() override {}
  void OnUnmeasured(std::string_view name, uint64_t count, bool in_graph) override {
    seen.push_back({std::string(name), count, in_graph});
  }
  std::vector<Unmeasured> seen;
};

class KernelActivityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CaptureCounters::Get().Reset();
    g_buffer = &buffer_;
    g_next = 0;
    g_enable_result = CUPTI_SUCCESS;
    g_flushes = 0;
  }
  FakeBuffer buffer_;
  CuptiApi api_ = FakeApi();
  KernelActivityCheck check_{"numtrace_reduce_batch"};
};

TEST_F(KernelActivityTest, RecordsReachTheCheckAndFinishReportsTheUnmeasured) {
  KernelActivity activity(api_, &check_);
  ASSERT_TRUE(activity.Open());
  check_.NoteLaunch(1);
  buffer_.kernels = {Kernel(1, "gemm"), Kernel(2, "nccl_kernel"), Kernel(3, "numtrace_reduce_batch"),
                     Kernel(4, "graph_node", 9)};
  buffer_.internal.kind = CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API;
  buffer_.internal.correlationId = 2;
  buffer_.has_internal = true;
  uint8_t dummy[8];
  activity.ReadBuffer(dummy, sizeof dummy);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityKernels), 4u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityInternalLaunches), 1u);
  RecordingSink sink;
  activity.Finish(&sink);
  EXPECT_EQ(g_flushes, 1);
  EXPECT_EQ(g_last_flush_flag, static_cast<uint32_t>(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) << "forced at the end";
  EXPECT_FALSE(activity.open());
  EXPECT_FALSE(activity.Open()) << "a writer tick after the exit flush enables nothing";
  ASSERT_EQ(sink.seen.size(), 2u);
  EXPECT_EQ(sink.seen[0].name, "graph_node");
  EXPECT_TRUE(sink.seen[0].in_graph);
  EXPECT_EQ(sink.seen[1].name, "nccl_kernel");
  EXPECT_EQ(sink.seen[1].count, 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kKernelsUnmeasured), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kKernelsInGraphs), 1u);
}

TEST_F(KernelActivityTest, StepEndFlushesWithoutForceAndReportsWhatCame) {
  KernelActivity activity(api_, &check_);
  RecordingSink sink;
  activity.StepEnded(&sink);
  EXPECT_EQ(g_flushes, 0) << "nothing registered yet: nothing to flush";
  ASSERT_TRUE(activity.Open());
  buffer_.kernels = {Kernel(5, "hidden_kernel")};
  uint8_t dummy[8];
  activity.ReadBuffer(dummy, sizeof dummy);
  activity.StepEnded(&sink);
  EXPECT_EQ(g_flushes, 1);
  EXPECT_EQ(g_last_flush_flag, 0u) << "a plain flush: completed buffers only";
  ASSERT_EQ(sink.seen.size(), 1u);
  EXPECT_EQ(sink.seen[0].name, "hidden_kernel");
  activity.Finish(&sink);
  EXPECT_EQ(sink.seen.size(), 1u) << "reported once";
}

TEST_F(KernelActivityTest, RefusedActivityIsReportedOnceAndNeverRetried) {
  g_enable_result = CUPTI_ERROR_NOT_SUPPORTED;  // e.g. a sandbox without profiling
  KernelActivity activity(api_, &check_);
  EXPECT_FALSE(activity.Open());
  EXPECT_TRUE(activity.unavailable());
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 1u);
  g_enable_result = CUPTI_SUCCESS;
  EXPECT_FALSE(activity.Open()) << "not retried on every step";
  RecordingSink sink;
  activity.Finish(&sink);
  EXPECT_TRUE(sink.seen.empty());
}

TEST_F(KernelActivityTest, ACuptiWithoutActivityFunctionsIsUnavailable) {
  CuptiApi bare;
  KernelActivity activity(bare, &check_);
  EXPECT_FALSE(activity.Open());
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 1u);
  activity.Finish(nullptr);  // nothing registered: no flush, no crash
  EXPECT_EQ(g_flushes, 0);
}

}  // namespace
}  // namespace numtrace::shim
