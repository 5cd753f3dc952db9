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
#include "test/shim/cupti/recording_sink.h"

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

// Review round 4, finding 13: CUPTI's activity buffer callbacks are one
// process-wide slot, no subscriber needed. This fake models it as kineto
// meets it (libkineto/src/CuptiActivityApi.cpp): the last registration
// wins, a kernel's record goes into the buffer being filled (asked from
// whoever is registered when a new one is needed), a flush hands every
// buffer back to whoever is registered at that moment, and
// cuptiActivityDisable(CONCURRENT_KERNEL) stops kernel records for all.
namespace slot {
CUpti_BuffersCallbackRequestFunc request = nullptr;
CUpti_BuffersCallbackCompleteFunc complete = nullptr;
uint8_t* filling = nullptr;
size_t capacity = 0, used = 0;
bool kernels_on = false;
CUptiResult Register(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c) {
  request = r;
  complete = c;
  return CUPTI_SUCCESS;
}
CUptiResult Enable(CUpti_ActivityKind k) {
  if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) kernels_on = true;
  return CUPTI_SUCCESS;
}
CUptiResult Disable(CUpti_ActivityKind k) {
  if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) kernels_on = false;
  return CUPTI_SUCCESS;
}
// Every record here is complete: both flushes hand back the buffer being
// filled (an empty one stays with CUPTI).
CUptiResult Flush(uint32_t) {
  if (filling != nullptr && used > 0) {
    uint8_t* b = filling;
    filling = nullptr;
    complete(nullptr, 0, b, capacity, used);
  }
  return CUPTI_SUCCESS;
}
CUptiResult Next(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* at = *record == nullptr ? buffer : reinterpret_cast<uint8_t*>(*record) + sizeof(CUpti_ActivityKernel10);
  if (at + sizeof(CUpti_ActivityKernel10) > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(at);
  return CUPTI_SUCCESS;
}
// A kernel ran.
void Run(uint32_t correlation, const char* name) {
  if (!kernels_on || request == nullptr) return;
  if (filling != nullptr && used + sizeof(CUpti_ActivityKernel10) > capacity) Flush(0);
  if (filling == nullptr) {
    size_t max = 0;
    request(&filling, &capacity, &max);
    used = 0;
  }
  CUpti_ActivityKernel10 k = Kernel(correlation, name);
  std::memcpy(filling + used, &k, sizeof k);
  used += sizeof k;
}
CuptiApi Api() {
  CuptiApi api = FakeApi();
  api.cuptiActivityRegisterCallbacks = &Register;
  api.cuptiActivityEnable = &Enable;
  api.cuptiActivityDisable = &Disable;
  api.cuptiActivityFlushAll = &Flush;
  api.cuptiActivityGetNextRecord = &Next;
  return api;
}
}  // namespace slot

// The other tool: kineto's buffers come from its own pool (static here, so
// a free() of one by numtrace would abort the test), and it counts the
// kernel records it got and the buffers it never lent ("bufferCompleted
// called with unknown buffer").
namespace kineto {
alignas(8) uint8_t pool[8][64 << 10];
int lent = 0, records = 0, unknown = 0;
void CUPTIAPI Request(uint8_t** buffer, size_t* size, size_t* max) {
  *buffer = pool[lent++ % 8];
  *size = sizeof pool[0];
  *max = 0;
}
void CUPTIAPI Complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (buffer < &pool[0][0] || buffer >= &pool[0][0] + sizeof pool) ++unknown;
  CUpti_Activity* r = nullptr;
  while (slot::Next(buffer, valid, &r) == CUPTI_SUCCESS) ++records;
}
// enableCuptiActivities / disableCuptiActivities, as far as kernels go.
void StartProfile() {
  slot::Register(&Request, &Complete);
  slot::Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}
void StopProfile() { slot::Disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); }
}  // namespace kineto

class SharedActivityTest : public KernelActivityTest {
 protected:
  void SetUp() override {
    KernelActivityTest::SetUp();
    slot::request = nullptr;
    slot::complete = nullptr;
    slot::filling = nullptr;
    slot::kernels_on = false;
    kineto::lent = kineto::records = kineto::unknown = 0;
    ::testing::internal::CaptureStderr();
  }
  // One captured step: a launch noted, its kernel run, the step's end.
  void Step(KernelActivity& a) {
    check_.NoteLaunch(next_);
    slot::Run(next_++, "gemm");
    a.StepEnded(&sink_);
  }
  int Lines(const std::string& err, const char* what) {
    int n = 0;
    for (size_t at = err.find(what); at != std::string::npos; at = err.find(what, at + 1)) ++n;
    return n;
  }
  CuptiApi shared_ = slot::Api();
  RecordingSink sink_;
  uint32_t next_ = 1;
};

TEST_F(SharedActivityTest, AProfilerTakingTheBuffersMidRunIsSaidOnce) {
  KernelActivity a(shared_, &check_);
  ASSERT_TRUE(a.Open());
  for (int i = 0; i < 3; ++i) Step(a);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityKernels), 3u) << "records reach numtrace";
  kineto::StartProfile();
  for (uint32_t i = 1; i < KernelActivity::kSilentStepEnds; ++i) Step(a);
  EXPECT_TRUE(sink_.warnings.empty()) << "not yet: records may come a few steps late";
  Step(a);
  ASSERT_EQ(sink_.warnings.size(), 1u) << "said at the kSilentStepEnds-th silent step end";
  for (int i = 0; i < 10; ++i) Step(a);
  kineto::StopProfile();
  a.Finish(&sink_);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(sink_.warnings.size(), 1u) << "once";
  EXPECT_NE(sink_.warnings[0].find("stopped reaching numtrace"), std::string::npos) << sink_.warnings[0];
  EXPECT_EQ(Lines(err, "stopped reaching numtrace"), 1) << err;
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityKernels), 3u);
  EXPECT_GT(kineto::records, 0) << "the profiler got the kernels";
}

// Taken with numtrace's buffer half full, two step ends before exit: the
// forced flush at exit hands it to the profiler ("unknown buffer" there).
TEST_F(SharedActivityTest, BuffersTakenShortlyBeforeExitAreSaidAtExit) {
  KernelActivity a(shared_, &check_);
  ASSERT_TRUE(a.Open());
  Step(a);
  check_.NoteLaunch(next_);
  slot::Run(next_++, "gemm");  // into numtrace's buffer
  kineto::StartProfile();
  Step(a);
  Step(a);
  EXPECT_TRUE(sink_.warnings.empty());
  a.Finish(&sink_);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(sink_.warnings.size(), 1u) << err;
  EXPECT_EQ(Lines(err, "stopped reaching numtrace"), 1) << err;
  EXPECT_EQ(kineto::unknown, 1) << "numtrace's buffer went to the profiler";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 1u);
}

// The profiler registered first (a profile started before the job's first
// CUDA work): numtrace's Open takes the slot over, and the profiler's
// buffer comes back to numtrace - read, never freed (it is the profiler's
// memory: a static pool here, whose free() would abort), and said once.
TEST_F(SharedActivityTest, AnotherToolsBufferIsReadNeverFreedAndSaid) {
  kineto::StartProfile();
  slot::Run(next_++, "early_kernel");  // into the profiler's buffer
  KernelActivity a(shared_, &check_);
  ASSERT_TRUE(a.Open());
  Step(a);
  Step(a);
  a.Finish(&sink_);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(sink_.warnings.size(), 1u) << err;
  EXPECT_NE(sink_.warnings[0].find("did not allocate"), std::string::npos) << sink_.warnings[0];
  EXPECT_EQ(Lines(err, "did not allocate"), 1) << err;
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityKernels), 3u) << "its records were read too";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 0u) << "numtrace's check still works";
}

TEST_F(SharedActivityTest, NothingIsSaidWhileRecordsFlow) {
  KernelActivity a(shared_, &check_);
  ASSERT_TRUE(a.Open());
  for (int i = 0; i < 40; ++i) Step(a);
  a.Finish(&sink_);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(sink_.warnings.empty()) << sink_.warnings[0];
  EXPECT_EQ(err, "");
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityKernels), 40u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 0u);
}

}  // namespace
}  // namespace numtrace::shim
