// The GPU dump copier against a fake driver (no GPU here): copies queued on
// the launch's stream with an event behind them, handed out only once the
// event completes, in the recording context, pinned memory given back, and
// failures reported per item instead of bytes.
#include "shim/device/cuda_dump_copier.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "shim/driver/driver_api.h"

namespace numtrace::shim {
namespace {

struct FakeDriver {
  bool events_ready = false;
  bool fail_host_alloc = false;
  bool fail_record = false;
  int host_live = 0;               // pinned allocations not yet freed
  std::vector<CUstream> copy_streams;
  std::vector<CUcontext> contexts{reinterpret_cast<CUcontext>(0xC0)};
  std::vector<CUcontext> queried_in;
};
FakeDriver* f;

CUresult CtxGetCurrent(CUcontext* c) {
  *c = f->contexts.back();
  return CUDA_SUCCESS;
}
CUresult CtxPush(CUcontext c) { f->contexts.push_back(c); return CUDA_SUCCESS; }
CUresult CtxPop(CUcontext* c) { *c = f->contexts.back(); f->contexts.pop_back(); return CUDA_SUCCESS; }
CUresult HostAlloc(void** p, size_t n, unsigned) {
  if (f->fail_host_alloc) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = std::malloc(n);
  ++f->host_live;
  return CUDA_SUCCESS;
}
CUresult HostFree(void* p) { std::free(p); --f->host_live; return CUDA_SUCCESS; }
CUresult DtoH(void* h, CUdeviceptr d, size_t n, CUstream s) {
  std::memcpy(h, reinterpret_cast<void*>(d), n);  // "device" memory is host memory here
  f->copy_streams.push_back(s);
  return CUDA_SUCCESS;
}
CUresult EventCreate(CUevent* e, unsigned) { *e = reinterpret_cast<CUevent>(new int(0)); return CUDA_SUCCESS; }
CUresult EventDestroy(CUevent e) { delete reinterpret_cast<int*>(e); return CUDA_SUCCESS; }
CUresult EventRecord(CUevent, CUstream) { return f->fail_record ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS; }
CUresult EventQuery(CUevent) {
  f->queried_in.push_back(f->contexts.back());
  return f->events_ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult GetErrorString(CUresult, const char** s) { *s = "fake error"; return CUDA_SUCCESS; }

DriverApi FakeApi() {
  DriverApi a;
  a.cuGetErrorString = &GetErrorString;
  a.cuCtxGetCurrent = &CtxGetCurrent;
  a.cuCtxPushCurrent_v2 = &CtxPush;
  a.cuCtxPopCurrent_v2 = &CtxPop;
  a.cuMemHostAlloc = &HostAlloc;
  a.cuMemFreeHost = &HostFree;
  a.cuMemcpyDtoHAsync_v2 = &DtoH;
  a.cuEventCreate = &EventCreate;
  a.cuEventDestroy_v2 = &EventDestroy;
  a.cuEventRecord = &EventRecord;
  a.cuEventQuery = &EventQuery;
  return a;
}

class CudaDumpCopierTest : public ::testing::Test {
 protected:
  void SetUp() override { f = &fake; }
  FakeDriver fake;
  DriverApi api = FakeApi();
  std::vector<float> x = std::vector<float>(32, 1.25f), y = std::vector<float>(8, -3.0f);
  MeasureItem items[2] = {{reinterpret_cast<uint64_t>(x.data()), 128, DType::kF32},
                          {reinterpret_cast<uint64_t>(y.data()), 32, DType::kF32}};
};

TEST_F(CudaDumpCopierTest, CopiesArriveOnlyAfterTheirEventAndFreeTheirMemory) {
  CudaDumpCopier c(api);
  ASSERT_TRUE(c.Enqueue(0x77, items, 9));
  EXPECT_EQ(fake.copy_streams, (std::vector<CUstream>{reinterpret_cast<CUstream>(0x77), reinterpret_cast<CUstream>(0x77)}));
  int calls = 0;
  auto fn = [&](uint64_t ticket, size_t item, std::span<const uint8_t> bytes, bool failed) {
    ++calls;
    EXPECT_EQ(ticket, 9u);
    EXPECT_FALSE(failed);
    const auto& src = item == 0 ? x : y;
    ASSERT_EQ(bytes.size(), src.size() * 4);
    EXPECT_EQ(std::memcmp(bytes.data(), src.data(), bytes.size()), 0);
  };
  fake.contexts = {nullptr};  // the writer thread has no current context
  c.Poll(fn);
  EXPECT_EQ(calls, 0) << "the copy has not finished";
  EXPECT_EQ(fake.queried_in.back(), reinterpret_cast<CUcontext>(0xC0)) << "queried in its own context";
  fake.events_ready = true;
  c.Poll(fn);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(fake.host_live, 0);
  EXPECT_EQ(c.in_flight(), 0u);
  EXPECT_EQ(fake.contexts, (std::vector<CUcontext>{nullptr})) << "context stack restored";
}

TEST_F(CudaDumpCopierTest, FailuresAreReportedPerItem) {
  CudaDumpCopier c(api);
  fake.fail_host_alloc = true;
  fake.events_ready = true;
  ASSERT_TRUE(c.Enqueue(0x77, items, 2));  // the event is there; the items failed
  int failed = 0;
  c.Poll([&](uint64_t, size_t, std::span<const uint8_t> bytes, bool bad) {
    failed += bad;
    EXPECT_TRUE(bytes.empty());
  });
  EXPECT_EQ(failed, 2);
  fake.fail_host_alloc = false;
  fake.fail_record = true;
  EXPECT_FALSE(c.Enqueue(0x77, items, 3)) << "no event: nothing can tell when the copies end";
}

}  // namespace
}  // namespace numtrace::shim
