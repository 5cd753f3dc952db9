// File: test/shim/cupti/cuda_device_test.cc
//
// CudaDevice over a fake driver whose "device memory" is host memory and
// whose "kernel" fills each result from its item: checks the batch ABI
// wiring (parameter order, staging, copies), FIFO ring recycling, refusal on
// full rings, and that Poll never blocks. (Lives here,
// not in test/shim/device/, because the CUDA layer's tests are one folder.)
#include "shim/device/cuda_device.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/settings/config.h"
#include "shim/driver/driver_api.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/range_oracle.h"
#include "shim/reduce/batch_abi.h"

namespace numtrace::shim {
namespace {

struct FakeGpu {
  bool capturing = false;
  bool fail_alloc = false;
  int allocs = 0;           // cuMemAlloc + cuMemHostAlloc + cuEventCreate calls
  int mem_allocs = 0;       // cuMemAlloc + cuMemHostAlloc (may synchronise)
  uint64_t job_bytes = 0;   // device memory the job itself holds (cuMemGetInfo)
  int capture_queries = 0;
  int loaded_into = 0;      // cuKernelGetFunction calls
  int mode_depth = 0;       // relaxed-mode scopes currently open
  int max_mode_depth = 0;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  bool events_ready = true;
  int launches = 0;
  uint64_t last_grid = 0;
  std::map<CUevent, bool> recorded;
  // catch_up >= 0: an event queried more than this many times since its
  // record has completed (the GPU works on while the host polls); stuck: no
  // event ever completes (a kernel waiting for a dead NCCL peer).
  int catch_up = -1;
  bool stuck = false;
  std::map<CUevent, int> queries_of;
  std::atomic<int> stuck_queries{0};  // queries answered "not ready" while stuck
  bool fail_event_create = false;
  int fail_queries = 0;
  int fail_launches = 0;  // the next N cuLaunchKernel calls answer an error
  int fail_records = 0;   // the next N cuEventRecord calls answer an error
  // cuPointerGetAttributes' DEVICE_ORDINAL by range start (others: 0), and
  // cuCtxGetDevice by context (others: 0).
  std::map<uint64_t, int> range_device;
  std::map<CUcontext, int> context_device;  // the next N event queries answer an error (a faulted batch)
  // The thread's context stack (the fake is single-threaded): top is current.
  std::vector<CUcontext> contexts{reinterpret_cast<CUcontext>(0xC0)};
  std::vector<CUcontext> queried_in;  // the current context at each cuEventQuery
  // cuStreamGetCtx: streams of another context (others: the current one).
  std::map<uint64_t, CUcontext> stream_ctx;
  bool stream_ctx_fails = false;
  // cuPointerGetAttributes: [start, start+size) ranges the driver confirms;
  // empty means every pointer is confirmed as its own range.
  std::map<uint64_t, uint64_t> ranges;
  int pointer_queries = 0;
  // cuMemGetAddressRange: the mapped pieces, when they differ from `ranges`
  // (a VMM or pool reservation mapped in part). Empty: all of each range.
  std::map<uint64_t, uint64_t> mapped;
  // Device memory accounting (cuMemAlloc/cuMemFree) and cuMemGetInfo.
  std::map<uint64_t, uint64_t> live;
  uint64_t live_bytes = 0, peak_bytes = 0;
  uint64_t gpu_bytes = 0;  // cuMemGetInfo: free = gpu_bytes - live_bytes; 0: no cuMemGetInfo answer
  // lag >= 0: an event completes once `lag` more events were recorded after it
  // (the GPU that many batches behind the host).
  int lag = -1;
  uint64_t records = 0;
  std::map<CUevent, uint64_t> recorded_at;
  // cuMemAlloc blocks while alloc_gate is set (a slow or stuck allocation).
  std::atomic<bool> alloc_gate{false}, in_alloc{false};
  // Review round 4, finding 11: `blocking` blocks on a thread that set
  // t_gated (a stream's launch queue full) until `open`; `entered` says it
  // is blocked. A latch, not a sleep: no timing in the test's outcome.
  enum class Call { kNone, kCopyIn, kLaunch, kCopyOut, kRecord, kEventCreate, kPointerQuery };
  Call blocking = Call::kNone;
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool entered = false, open = false;
};
FakeGpu* g;
thread_local bool t_gated = false;

void MaybeBlock(FakeGpu::Call call) {
  if (!t_gated || g->blocking != call) return;
  std::unique_lock<std::mutex> lock(g->gate_mu);
  g->entered = true;
  g->gate_cv.notify_all();
  g->gate_cv.wait(lock, [] { return g->open; });
}

const uint8_t kFatbin[16] = {};

CUresult CtxGetCurrent(CUcontext* c) {
  *c = g->contexts.empty() ? nullptr : g->contexts.back();
  return CUDA_SUCCESS;
}
CUresult LibLoad(CUlibrary* l, const void*, CUjit_option*, void**, unsigned, CUlibraryOption*, void**, unsigned) {
  *l = reinterpret_cast<CUlibrary>(0x11);
  return CUDA_SUCCESS;
}
CUresult LibGetKernel(CUkernel* k, CUlibrary, const char* name) {
  EXPECT_STREQ(name, kReduceBatchKernelName);
  *k = reinterpret_cast<CUkernel>(0x22);
  return CUDA_SUCCESS;
}
CUresult MemAlloc(CUdeviceptr* p, size_t n) {
  ++g->allocs;
  ++g->mem_allocs;
  if (g->alloc_gate) {
    g->in_alloc = true;
    for (int i = 0; i < 5000 && g->alloc_gate; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    g->in_alloc = false;
  }
  if (g->fail_alloc) return CUDA_ERROR_OUT_OF_MEMORY;
  if (g->gpu_bytes != 0 && g->job_bytes + g->live_bytes + n > g->gpu_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(n));
  g->live[*p] = n;
  g->live_bytes += n;
  g->peak_bytes = std::max(g->peak_bytes, g->live_bytes);
  return CUDA_SUCCESS;
}
CUresult MemFree(CUdeviceptr p) {
  auto it = g->live.find(p);
  if (it != g->live.end()) {
    g->live_bytes -= it->second;
    g->live.erase(it);
  }
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult MemGetInfo(size_t* free, size_t* total) {
  if (g->gpu_bytes == 0) return CUDA_ERROR_NOT_SUPPORTED;
  *total = g->gpu_bytes;
  *free = g->gpu_bytes - g->live_bytes - g->job_bytes;
  return CUDA_SUCCESS;
}
CUresult HostAlloc(void** p, size_t n, unsigned) {
  ++g->allocs;
  ++g->mem_allocs;
  *p = std::malloc(n);
  return CUDA_SUCCESS;
}
CUresult KernelGetFunction(CUfunction* f, CUkernel k) {
  EXPECT_EQ(reinterpret_cast<uint64_t>(k), 0x22u);
  ++g->loaded_into;
  *f = reinterpret_cast<CUfunction>(0x33);
  return CUDA_SUCCESS;
}
// Records that every exchange to relaxed is undone, in order.
CUresult ExchangeMode(CUstreamCaptureMode* m) {
  CUstreamCaptureMode old = g->mode;
  g->mode = *m;
  *m = old;
  g->mode_depth += g->mode == CU_STREAM_CAPTURE_MODE_RELAXED && old != g->mode ? 1 : 0;
  if (old == CU_STREAM_CAPTURE_MODE_RELAXED && g->mode != old) --g->mode_depth;
  g->max_mode_depth = std::max(g->max_mode_depth, g->mode_depth);
  return CUDA_SUCCESS;
}
CUresult CtxPush(CUcontext c) { g->contexts.push_back(c); return CUDA_SUCCESS; }
CUresult CtxPop(CUcontext* c) {
  if (g->contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  *c = g->contexts.back();
  g->contexts.pop_back();
  return CUDA_SUCCESS;
}
CUresult HostFree(void* p) { std::free(p); return CUDA_SUCCESS; }
CUresult IsCapturing(CUstream, CUstreamCaptureStatus* s) {
  ++g->capture_queries;
  *s = g->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult HtoD(CUdeviceptr d, const void* h, size_t n, CUstream) {
  MaybeBlock(FakeGpu::Call::kCopyIn);
  std::memcpy(reinterpret_cast<void*>(d), h, n);
  return CUDA_SUCCESS;
}
CUresult DtoH(void* h, CUdeviceptr d, size_t n, CUstream) {
  MaybeBlock(FakeGpu::Call::kCopyOut);
  std::memcpy(h, reinterpret_cast<void*>(d), n);
  return CUDA_SUCCESS;
}
// The "kernel": results[slot] = {n = bytes, hash = address} for each item,
// after checking the plan and that counters arrive zeroed.
CUresult Launch(CUfunction f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned,
                unsigned, CUstream, void** params, void**) {
  MaybeBlock(FakeGpu::Call::kLaunch);
  if (g->fail_launches > 0) {
    --g->fail_launches;
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  }
  EXPECT_EQ(reinterpret_cast<uint64_t>(f), 0x33u) << "the function loaded into the context";
  EXPECT_EQ(g->mode, CU_STREAM_CAPTURE_MODE_RELAXED);
  EXPECT_EQ(bx, kNtBlockThreads);
  auto* items = *static_cast<NtBatchItem**>(params[0]);
  uint32_t m = *static_cast<uint32_t*>(params[1]);
  auto* counters = *static_cast<uint32_t**>(params[3]);
  auto* results = *static_cast<BufferStats**>(params[4]);
  uint64_t tiles = 0;
  for (uint32_t i = 0; i < m; ++i) {
    EXPECT_EQ(items[i].first_tile, tiles);
    tiles += items[i].tile_count;
    EXPECT_EQ(counters[i], 0u);
    BufferStats s;
    s.n = items[i].bytes;
    s.hash = items[i].address;
    results[items[i].result_slot] = s;
  }
  EXPECT_EQ(gx, tiles);
  g->last_grid = gx;
  ++g->launches;
  return CUDA_SUCCESS;
}
CUresult EventCreate(CUevent* e, unsigned) {
  MaybeBlock(FakeGpu::Call::kEventCreate);
  ++g->allocs;
  if (g->fail_event_create) return CUDA_ERROR_OUT_OF_MEMORY;
  *e = reinterpret_cast<CUevent>(new int(0));  // leaked: a test's handful
  return CUDA_SUCCESS;
}
CUresult EventDestroy(CUevent) { return CUDA_SUCCESS; }  // events are leaked above
CUresult EventRecord(CUevent e, CUstream) {
  MaybeBlock(FakeGpu::Call::kRecord);
  if (g->fail_records > 0) {
    --g->fail_records;
    return CUDA_ERROR_INVALID_HANDLE;
  }
  g->recorded[e] = true;
  g->recorded_at[e] = g->records++;
  g->queries_of.erase(e);
  return CUDA_SUCCESS;
}
CUresult EventQuery(CUevent e) {
  EXPECT_EQ(g->mode, CU_STREAM_CAPTURE_MODE_RELAXED) << "event polls must not break a global capture";
  g->queried_in.push_back(g->contexts.empty() ? nullptr : g->contexts.back());
  if (g->stuck) {
    ++g->stuck_queries;
    return CUDA_ERROR_NOT_READY;
  }
  if (g->fail_queries > 0) {
    --g->fail_queries;
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  if (g->lag >= 0 && g->records - g->recorded_at[e] > static_cast<uint64_t>(g->lag)) return CUDA_SUCCESS;
  if (g->catch_up >= 0 && ++g->queries_of[e] > g->catch_up) return CUDA_SUCCESS;
  return g->events_ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult StreamGetCtx(CUstream s, CUcontext* c) {
  if (g->stream_ctx_fails) return CUDA_ERROR_INVALID_HANDLE;
  auto it = g->stream_ctx.find(reinterpret_cast<uint64_t>(s));
  if (it != g->stream_ctx.end()) {
    *c = it->second;
    return CUDA_SUCCESS;
  }
  return CtxGetCurrent(c);
}
// Success with zeros for unknown pointers, like the driver.
CUresult PointerAttrs(unsigned n, CUpointer_attribute* attrs, void** data, CUdeviceptr p) {
  MaybeBlock(FakeGpu::Call::kPointerQuery);
  ++g->pointer_queries;
  uint64_t start = 0, size = 0;
  if (g->ranges.empty()) {
    start = p;
    size = 1ull << 40;
  } else {
    for (auto& [s, n] : g->ranges) {
      if (p >= s && p < s + n) {
        start = s;
        size = n;
      }
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    if (attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) *static_cast<CUdeviceptr*>(data[i]) = start;
    if (attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_SIZE) *static_cast<size_t*>(data[i]) = size;
    if (attrs[i] == CU_POINTER_ATTRIBUTE_MAPPED) *static_cast<unsigned*>(data[i]) = start != 0;
    if (attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
      auto it = g->range_device.find(start);
      *static_cast<int*>(data[i]) = it != g->range_device.end() ? it->second : 0;
    }
  }
  return CUDA_SUCCESS;
}

CUresult CtxGetDevice(CUdevice* dev) {
  auto it = g->context_device.find(g->contexts.empty() ? nullptr : g->contexts.back());
  *dev = it != g->context_device.end() ? it->second : 0;
  return CUDA_SUCCESS;
}

CUresult AddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr p) {
  const std::map<uint64_t, uint64_t>& pieces = g->mapped.empty() ? g->ranges : g->mapped;
  if (pieces.empty()) {
    *base = p;
    *size = 1ull << 40;
    return CUDA_SUCCESS;
  }
  for (auto& [s, n] : pieces) {
    if (p >= s && p < s + n) {
      *base = s;
      *size = n;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

DriverApi FakeApi() {
  DriverApi a;
  a.cuCtxGetCurrent = &CtxGetCurrent;
  a.cuLibraryLoadData = &LibLoad;
  a.cuLibraryGetKernel = &LibGetKernel;
  a.cuMemAlloc_v2 = &MemAlloc;
  a.cuMemFree_v2 = &MemFree;
  a.cuMemHostAlloc = &HostAlloc;
  a.cuMemFreeHost = &HostFree;
  a.cuStreamIsCapturing = &IsCapturing;
  a.cuMemcpyHtoDAsync_v2 = &HtoD;
  a.cuMemcpyDtoHAsync_v2 = &DtoH;
  a.cuLaunchKernel = &Launch;
  a.cuEventCreate = &EventCreate;
  a.cuEventDestroy_v2 = &EventDestroy;
  a.cuEventRecord = &EventRecord;
  a.cuEventQuery = &EventQuery;
  a.cuKernelGetFunction = &KernelGetFunction;
  a.cuThreadExchangeStreamCaptureMode = &ExchangeMode;
  a.cuCtxPushCurrent_v2 = &CtxPush;
  a.cuCtxPopCurrent_v2 = &CtxPop;
  a.cuStreamGetCtx = &StreamGetCtx;
  a.cuPointerGetAttributes = &PointerAttrs;
  a.cuCtxGetDevice = &CtxGetDevice;
  a.cuMemGetAddressRange_v2 = &AddressRange;
  a.cuMemGetInfo_v2 = &MemGetInfo;
  return a;
}

// Chunks added to the rings by growth: all chunks but each context's first.
uint64_t Grown() {
  return CaptureCounters::Get().value(Counter::kRingChunks) - CaptureCounters::Get().value(Counter::kContextsPrepared);
}

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g = &gpu_;
    CaptureCounters::Get().Reset();
  }
  FakeGpu gpu_;
  DriverApi api_ = FakeApi();
};

TEST_F(CudaDeviceTest, EnqueuePollDeliversOneResultPerItem) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  MeasureItem items[2] = {{0x1000, 4096, DType::kF32}, {0x9000, 100, DType::kBF16}};
  ASSERT_TRUE(dev.Enqueue(0x5, items, 42));
  EXPECT_EQ(gpu_.launches, 1);
  EXPECT_EQ(gpu_.last_grid, 2u) << "one tile each";
  int calls = 0;
  dev.Poll([&](uint64_t ticket, std::span<const BufferStats> s, bool) {
    ++calls;
    EXPECT_EQ(ticket, 42u);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].n, 4096u);
    EXPECT_EQ(s[0].hash, 0x1000u);
    EXPECT_EQ(s[1].n, 100u);
    EXPECT_EQ(s[1].hash, 0x9000u);
  });
  EXPECT_EQ(calls, 1);
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++calls; });
  EXPECT_EQ(calls, 1) << "each ticket once";
}

// Review finding 12: an event error recycled the batch's space but parked
// nothing, so its ticket never completed and the engine held every later
// record until exit. Fails before the fix: ticket 1 was never handed out.
TEST_F(CudaDeviceTest, ABatchWhoseEventFailedIsHandedOutAsFailed) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  gpu_.fail_queries = 1;  // batch 1's event answers an error
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 2));
  std::map<uint64_t, std::pair<size_t, bool>> got;
  dev.Poll([&](uint64_t t, std::span<const BufferStats> s, bool failed) { got[t] = {s.size(), failed}; });
  ASSERT_EQ(got.count(1), 1u) << "the failed batch's ticket completes";
  EXPECT_TRUE(got[1].second);
  EXPECT_EQ(got[1].first, 0u) << "no stats from a batch that failed";
  ASSERT_EQ(got.count(2), 1u);
  EXPECT_FALSE(got[2].second);
  EXPECT_EQ(got[2].first, 1u);
}

TEST_F(CudaDeviceTest, PollDoesNotDeliverUnfinishedWork) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  gpu_.events_ready = false;
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  int calls = 0;
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++calls; });
  EXPECT_EQ(calls, 0);
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();  // waits (polling its events), then Poll hands it over
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST_F(CudaDeviceTest, FullRingRefusesThenRecyclesInOrder) {
  // 64 KiB: each 16 MiB f32 item needs 1024 tiles x 96 B of partials.
  CudaDevice dev(api_, kFatbin, {.device_memory = 256 << 10, .host_memory = 64 << 10});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  gpu_.events_ready = false;
  MeasureItem big{0x1000, 16 << 20, DType::kF32};
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += dev.Enqueue(0x5, {&big, 1}, i) ? 1 : 0;
  EXPECT_GE(accepted, 1);
  EXPECT_LT(accepted, 10) << "the ring must fill";
  EXPECT_GT(CaptureCounters::Get().value(Counter::kRingFull), 0u);
  gpu_.events_ready = true;
  std::vector<uint64_t> tickets;
  dev.Poll([&](uint64_t t, std::span<const BufferStats>, bool) { tickets.push_back(t); });
  ASSERT_EQ(tickets.size(), static_cast<size_t>(accepted));
  for (size_t i = 0; i < tickets.size(); ++i) EXPECT_EQ(tickets[i], i);
  EXPECT_TRUE(dev.Enqueue(0x5, {&big, 1}, 99)) << "space came back";
  MeasureItem huge{0x1000, 1ull << 40, DType::kF32};
  EXPECT_FALSE(dev.Enqueue(0x5, {&huge, 1}, 100)) << "bigger than the ring";
}

TEST_F(CudaDeviceTest, EmptyBatchStillCompletesItsTicket) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  ASSERT_TRUE(dev.Enqueue(0x5, {}, 7));
  EXPECT_EQ(gpu_.launches, 0);
  int calls = 0;
  dev.Poll([&](uint64_t t, std::span<const BufferStats> s, bool) {
    ++calls;
    EXPECT_EQ(t, 7u);
    EXPECT_TRUE(s.empty());
  });
  EXPECT_EQ(calls, 1);
}

TEST_F(CudaDeviceTest, FirstEnqueuePreparesTheContextThenNothingIsAllocated) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  EXPECT_EQ(gpu_.allocs, 0) << "nothing at construction (the engine starts inside a launch)";
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1)) << "prepared lazily, at the first measurement";
  EXPECT_EQ(gpu_.loaded_into, 1);
  int after_prepare = gpu_.allocs;
  EXPECT_GE(after_prepare, 3) << "device ring, pinned ring, events";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kContextsPrepared), 1u);
  ASSERT_TRUE(dev.PrepareContext(0xC0)) << "idempotent";
  EXPECT_EQ(gpu_.allocs, after_prepare);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, i));
    dev.Poll([](uint64_t, std::span<const BufferStats>, bool) {});
  }
  EXPECT_EQ(gpu_.allocs, after_prepare) << "Enqueue allocated after the first";
  EXPECT_EQ(gpu_.mode, CU_STREAM_CAPTURE_MODE_GLOBAL) << "the thread's capture mode is restored";
  EXPECT_EQ(gpu_.mode_depth, 0);
  EXPECT_GE(gpu_.max_mode_depth, 1);
}

TEST_F(CudaDeviceTest, TheStreamsContextIsUsedNotTheCurrentOne) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  gpu_.stream_ctx[0x5] = reinterpret_cast<CUcontext>(0xC5);  // current is 0xC0
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  ASSERT_EQ(gpu_.contexts.size(), 1u) << "pushed for the preparation, popped after";
  EXPECT_EQ(gpu_.contexts.back(), reinterpret_cast<CUcontext>(0xC0));
  ASSERT_TRUE(dev.PrepareContext(0xC5)) << "0xC5 was the one prepared";
  int allocs = gpu_.allocs;
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  EXPECT_GT(gpu_.allocs, allocs) << "0xC0 had not been prepared";

  gpu_.stream_ctx_fails = true;  // the driver cannot say: the current context
  ASSERT_TRUE(dev.Enqueue(0x6, {&item, 1}, 2));
}

TEST_F(CudaDeviceTest, UnconfirmedRangesAreNeverRead) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  gpu_.ranges[0x10000] = 0x1000;  // the only mapped allocation
  MeasureItem items[3] = {{0x10100, 256, DType::kF32},   // inside: confirmed
                          {0x10f00, 512, DType::kF32},   // runs past the end
                          {0x90000, 64, DType::kF32}};   // unknown to the driver
  ASSERT_TRUE(dev.Enqueue(0x5, items, 9));
  EXPECT_EQ(gpu_.pointer_queries, 3);
  std::vector<BufferStats> got;
  dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) { got.assign(s.begin(), s.end()); });
  ASSERT_EQ(got.size(), 3u) << "one result per item still";
  EXPECT_EQ(got[0].n, 256u);
  EXPECT_EQ(got[1].n, 0u) << "measured over zero bytes";
  EXPECT_EQ(got[2].n, 0u);
  EXPECT_EQ(gpu_.last_grid, 3u) << "an empty item keeps its one (empty) tile: results stay positional";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRangesConfirmed), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRangesUnconfirmed), 2u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kBuffersSkipped), 2u);
}

// Review finding 10: one process driving several GPUs; a parameter word
// pointing at another GPU's memory (no peer access) was confirmed and read
// by the reduction - a fault that kills the context. Fails before the fix:
// the GPU-1 buffer was read.
TEST_F(CudaDeviceTest, ABufferOnAnotherGpuIsNeverRead) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  gpu_.ranges[0x10000] = 0x1000;  // GPU 0, the launch's
  gpu_.ranges[0x40000] = 0x1000;  // GPU 1
  gpu_.range_device[0x40000] = 1;
  MeasureItem items[2] = {{0x10000, 256, DType::kF32}, {0x40000, 256, DType::kF32}};
  ASSERT_TRUE(dev.Enqueue(0x5, items, 9));
  std::vector<BufferStats> got;
  dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) { got.assign(s.begin(), s.end()); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].n, 256u);
  EXPECT_EQ(got[1].n, 0u) << "another GPU's buffer: measured over zero bytes";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRangesOtherDevice), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kBuffersSkipped), 1u);

  // The launch's device is its context's: a context on GPU 1 reads GPU 1's.
  gpu_.stream_ctx[0x7] = reinterpret_cast<CUcontext>(0xC7);
  gpu_.context_device[reinterpret_cast<CUcontext>(0xC7)] = 1;
  ASSERT_TRUE(dev.Enqueue(0x7, items, 10));
  dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) { got.assign(s.begin(), s.end()); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].n, 0u);
  EXPECT_EQ(got[1].n, 256u);
}

// RANGE_START/RANGE_SIZE describe a reservation (VMM, pool); only part of
// it is mapped. Before the fix a buffer was confirmed against the whole
// reservation, so a stale word pointing into its unmapped part was read:
// an illegal-address error in the user's job.
TEST_F(CudaDeviceTest, ReadsAreBoundedByTheMappedPieceNotTheReservation) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  gpu_.ranges[0x100000] = 0x100000;  // a 1 MiB reservation
  gpu_.mapped[0x100000] = 0x10000;   // of which 64 KiB are mapped
  MeasureItem items[3] = {{0x100100, 0x1000, DType::kF32},    // inside the mapped piece
                          {0x100100, 0x20000, DType::kF32},   // runs into the unmapped part
                          {0x180000, 0x100, DType::kF32}};    // wholly in the unmapped part
  ASSERT_TRUE(dev.Enqueue(0x5, items, 3));
  std::vector<BufferStats> got;
  dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) { got.assign(s.begin(), s.end()); });
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].n, 0x1000u);
  EXPECT_EQ(got[1].n, 0u) << "never read past the mapped piece";
  EXPECT_EQ(got[2].n, 0u) << "never read in the unmapped part";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRangesUnconfirmed), 2u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRangesUnmapped), 1u) << "the driver refused 0x180000";
}

// Tensor dump copies follow the reductions' rule: a range the driver does not
// confirm is copied over zero bytes, never read.
TEST_F(CudaDeviceTest, DumpCopiesReadOnlyConfirmedRanges) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  std::vector<float> x(64, 2.5f);
  const uint64_t base = reinterpret_cast<uint64_t>(x.data());
  gpu_.ranges[base] = x.size() * sizeof(float);
  MeasureItem items[2] = {{base, 256, DType::kF32}, {0x90000, 64, DType::kF32}};
  ASSERT_TRUE(dev.EnqueueCopy(0x5, items, 4));
  std::map<size_t, size_t> sizes;
  dev.PollCopies([&](uint64_t, size_t item, std::span<const uint8_t> bytes, bool) { sizes[item] = bytes.size(); },
                 /*wait=*/true);
  EXPECT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0], 256u);
  EXPECT_EQ(sizes[1], 0u) << "unknown to the driver: never read";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRangesUnconfirmed), 1u);
}

// The engine's per-step cache stands in for the driver query when set.
class OneRange : public RangeOracle {
 public:
  std::optional<Allocation> Confirm(uint64_t address) override {
    ++asked;
    if (address >= 0x20000 && address < 0x21000) return Allocation{0x20000, 0x1000, AllocKind::kPlain};
    return std::nullopt;
  }
  int asked = 0;
};

TEST_F(CudaDeviceTest, RangesAreConfirmedThroughTheStepCacheWhenGiven) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  OneRange driver;
  StepRangeCache cache(&driver);
  dev.SetRangeOracle(&cache);
  MeasureItem items[2] = {{0x20100, 256, DType::kF32}, {0x20f00, 512, DType::kF32}};
  ASSERT_TRUE(dev.Enqueue(0x5, items, 1));
  ASSERT_TRUE(dev.Enqueue(0x5, items, 2));
  EXPECT_EQ(gpu_.pointer_queries, 0) << "no direct driver query";
  EXPECT_EQ(driver.asked, 1) << "one range, asked once for the step";
  std::vector<BufferStats> got;
  dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) { got.assign(s.begin(), s.end()); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].n, 256u);
  EXPECT_EQ(got[1].n, 0u) << "runs past the confirmed range: never read";
}

TEST_F(CudaDeviceTest, FailedPrepareLeavesTheContextUnmeasured) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  gpu_.fail_alloc = true;  // a GPU the job's allocator filled
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(dev.PrepareContext(0xC0));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot allocate"), std::string::npos) << err;
  gpu_.fail_alloc = false;
  EXPECT_FALSE(dev.PrepareContext(0xC0)) << "a failed context is not retried on the launch path";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kContextsFailed), 1u);
  MeasureItem item{0x1000, 64, DType::kF32};
  EXPECT_FALSE(dev.Enqueue(0x5, {&item, 1}, 1));
  EXPECT_EQ(gpu_.launches, 0);
}

// One path for the capture bit: the engine decides from the launch event;
// the device never asks the driver again (it once did, and also read a
// thread-local the switchboard set).
TEST_F(CudaDeviceTest, EnqueueNeverAsksAboutCapture) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  ASSERT_TRUE(dev.Enqueue(0x6, {&item, 1}, 2));
  EXPECT_EQ(gpu_.capture_queries, 0);
}
TEST_F(CudaDeviceTest, PollMakesTheBatchContextCurrentOnAThreadWithoutOne) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  gpu_.contexts.clear();  // the engine's poller thread: no current context
  int calls = 0;
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++calls; });
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(gpu_.queried_in.size(), 1u);
  EXPECT_EQ(reinterpret_cast<uint64_t>(gpu_.queried_in[0]), 0xC0u) << "queried in its context";
  EXPECT_TRUE(gpu_.contexts.empty()) << "the thread's context is restored";
  gpu_.queried_in.clear();
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++calls; });
  EXPECT_TRUE(gpu_.queried_in.empty()) << "nothing in flight: no query, no push";
  EXPECT_TRUE(gpu_.contexts.empty());
}

TEST_F(CudaDeviceTest, EventShortageGivesTheSpaceBackAndKeepsTheContext) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  gpu_.events_ready = false;  // every prepared event stays in flight
  MeasureItem item{0x1000, 64, DType::kF32};
  int accepted = 0;
  while (accepted < 1000 && dev.Enqueue(0x5, {&item, 1}, accepted)) ++accepted;
  ASSERT_GT(accepted, 0);
  gpu_.fail_event_create = true;
  EXPECT_FALSE(dev.Enqueue(0x5, {&item, 1}, 5000)) << "no event left, none can be made";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors), 1u);
  gpu_.fail_event_create = false;
  gpu_.events_ready = true;
  int delivered = 0;
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  EXPECT_EQ(delivered, accepted);
  EXPECT_TRUE(dev.Enqueue(0x5, {&item, 1}, 6000)) << "the context is still measured";
}

// A driver call failing while the batch is queued (here the launch):
// refused and counted once as a device error; an event recorded after the
// failure holds the batch's space until the stream has passed it, nothing
// is delivered for it, and the context goes on being measured.
TEST_F(CudaDeviceTest, ADriverErrorWhileQueueingRefusesTheBatchAndKeepsTheContext) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu_.fail_launches = 1;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(dev.Enqueue(0x5, {&item, 1}, 1));
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingFull), 0u);
  EXPECT_EQ(gpu_.records, 1u) << "the failed batch's event guards its space";
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 2)) << "the context is still measured";
  std::vector<uint64_t> tickets;
  dev.Poll([&](uint64_t t, std::span<const BufferStats>, bool) { tickets.push_back(t); });
  EXPECT_EQ(tickets, std::vector<uint64_t>{2}) << "the refused batch is not handed out";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors), 1u);
}

// No event could be recorded after a failure: the stream may still read the
// batch's space and nobody can tell when, so the context is no longer used.
TEST_F(CudaDeviceTest, ABatchWhoseEventCannotBeRecordedEndsMeasurementInItsContext) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu_.fail_records = 2;  // the batch's record, then the one after the failure
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(dev.Enqueue(0x5, {&item, 1}, 1));
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors), 1u);
  EXPECT_FALSE(dev.Enqueue(0x5, {&item, 1}, 2));
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceUnprepared), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors), 1u) << "each refusal counted once";
  EXPECT_EQ(gpu_.launches, 1);
}

// The application destroys a context while one of its launches is being
// queued (thread A blocked in `call`): the batch is refused, counted once
// (`counter`), and a new context under the same handle is prepared afresh.
void ReleaseWhileEnqueueing(FakeGpu& gpu, FakeGpu::Call call, Counter counter, int launches) {
  gpu.contexts.reserve(64);
  CudaDevice dev(FakeApi(), kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu.blocking = call;
  bool a_ok = true;
  std::thread a([&] {
    t_gated = true;
    a_ok = dev.Enqueue(0x5, {&item, 1}, 1);
  });
  {
    std::unique_lock<std::mutex> lock(gpu.gate_mu);
    gpu.gate_cv.wait(lock, [&] { return gpu.entered; });
  }
  dev.ReleaseContext(0xC0);
  {
    std::lock_guard<std::mutex> lock(gpu.gate_mu);
    gpu.open = true;
    gpu.gate_cv.notify_all();
  }
  a.join();
  EXPECT_FALSE(a_ok);
  EXPECT_EQ(gpu.launches, launches);
  EXPECT_EQ(CaptureCounters::Get().value(counter), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors) +
                CaptureCounters::Get().value(Counter::kDeviceUnprepared) +
                CaptureCounters::Get().value(Counter::kRingFull),
            1u)
      << "one refusal, one count";
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 2)) << "prepared afresh";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kContextsPrepared), 2u);
  std::vector<uint64_t> tickets;
  dev.Poll([&](uint64_t t, std::span<const BufferStats>, bool) { tickets.push_back(t); });
  EXPECT_EQ(tickets, std::vector<uint64_t>{2});
}

TEST_F(CudaDeviceTest, AContextReleasedWhileItsRangesAreConfirmedRefusesTheBatch) {
  ReleaseWhileEnqueueing(gpu_, FakeGpu::Call::kPointerQuery, Counter::kDeviceUnprepared, /*launches=*/0);
}

TEST_F(CudaDeviceTest, AContextReleasedWhileTheBatchIsLaunchedRefusesIt) {
  ReleaseWhileEnqueueing(gpu_, FakeGpu::Call::kLaunch, Counter::kDeviceErrors, /*launches=*/1);
}

// Issue 18, item 3: a model-size step. 10,000 launches each measuring a
// 100 MB bf16 buffer (about 1.2 MB of device scratch per measurement) with
// the GPU 256 batches behind the host: about 300 MB in flight, far more
// than the 64 MiB first chunk. Before the fix most of the step was dropped.
// The ring grows in Poll (the writer's thread, every 10 ms: here every 10
// launches), ahead of need once it is half full.
TEST_F(CudaDeviceTest, AModelSizeStepGrowsTheRingAndReusesItWithoutDrops) {
  gpu_.gpu_bytes = 80ull << 30;  // an H200's worth of free memory
  gpu_.lag = 256;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  int accepted = 0, delivered = 0;
  for (int i = 0; i < 10000; ++i) {
    accepted += dev.Enqueue(0x5, {&item, 1}, i) ? 1 : 0;
    if (i % 10 == 9) dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  }
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  EXPECT_EQ(accepted, 10000) << "no drops";
  EXPECT_EQ(delivered, 10000);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingFull), 0u);
  EXPECT_GT(Grown(), 0u) << "the first chunk alone is too small";
  EXPECT_LE(gpu_.peak_bytes, 1ull << 30) << "bounded: space is reused as batches complete";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingBytes), gpu_.peak_bytes);
}

// Review round 4, finding 4: the ring grew with cuMemAlloc and
// cuMemHostAlloc (both may synchronise) inside the application's launch
// callback. Now the launch path allocates nothing once the context is
// prepared; a batch that does not fit is refused and Poll grows the ring.
TEST_F(CudaDeviceTest, NoLaunchAllocatesMemoryOnceTheContextIsPrepared) {
  gpu_.gpu_bytes = 80ull << 30;
  gpu_.lag = 256;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 0)) << "prepares the context (the first chunk)";
  int on_launch_path = 0, refused = 0;
  for (int i = 1; i < 2000; ++i) {
    const int before = gpu_.mem_allocs;
    refused += dev.Enqueue(0x5, {&item, 1}, i) ? 0 : 1;
    on_launch_path += gpu_.mem_allocs - before;
  }
  EXPECT_EQ(on_launch_path, 0) << "no cuMemAlloc/cuMemHostAlloc inside Enqueue";
  EXPECT_GT(refused, 0) << "without a Poll the first chunk fills";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingFull), static_cast<uint64_t>(refused));
  EXPECT_EQ(Grown(), 0u);
  dev.Poll([](uint64_t, std::span<const BufferStats>, bool) {});
  EXPECT_EQ(Grown(), 1u) << "the refused batch asked Poll to grow the ring";
  EXPECT_GT(gpu_.mem_allocs, 2);
}

// Enqueues launches [from, to) of `item`, polling after every tenth as the
// writer's thread does; returns how many were refused.
int EnqueueWithPolls(CudaDevice& dev, const MeasureItem& item, int from, int to) {
  int refused = 0;
  for (int i = from; i < to; ++i) {
    refused += dev.Enqueue(0x5, {&item, 1}, i) ? 0 : 1;
    if (i % 10 == 9) dev.Poll([](uint64_t, std::span<const BufferStats>, bool) {});
  }
  return refused;
}

// Finding 4: the budget was an eighth of the free memory when the context
// was prepared, up to 16 GiB - on an H200 always 16 GiB. Now at most
// NUMTRACE_RING_MAX (2 GiB) and a 32nd of the GPU, read again at each growth.
TEST_F(CudaDeviceTest, TheRingStaysUnderItsCapOnABigGpu) {
  gpu_.gpu_bytes = 140ull << 30;
  gpu_.lag = 4096;  // about 5 GB of scratch in flight wanted
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  ::testing::internal::CaptureStderr();
  (void)EnqueueWithPolls(dev, item, 0, 6000);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_LE(gpu_.peak_bytes, settings::kDefaultRingMax) << "2 GiB, not 16";
  EXPECT_GT(gpu_.peak_bytes, settings::kDefaultRingMax / 2) << "it did grow to near the cap";
  EXPECT_GT(CaptureCounters::Get().value(Counter::kRingGrowthRefused), 0u);
  EXPECT_NE(err.find("NUMTRACE_RING_MAX"), std::string::npos) << err;
  gpu_.events_ready = true;  // done: 4,000 batches polled one by one would be slow
  dev.Drain();
}

TEST_F(CudaDeviceTest, RingMaxBoundsTheRing) {
  gpu_.gpu_bytes = 140ull << 30;
  gpu_.lag = 1024;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20, .ring_max = 256 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  ::testing::internal::CaptureStderr();
  (void)EnqueueWithPolls(dev, item, 0, 3000);
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_LE(gpu_.peak_bytes, 256u << 20);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingBytes), gpu_.peak_bytes);
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();
}

// Finding 4: free memory is read again before each growth. The job takes
// most of the GPU after numtrace's first growth: the ring grows no more
// (a tenth of the GPU stays free), says so once, and counts each refusal.
TEST_F(CudaDeviceTest, TheBudgetIsReadAgainBeforeEachGrowth) {
  gpu_.gpu_bytes = 80ull << 30;
  gpu_.lag = 1024;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  (void)EnqueueWithPolls(dev, item, 0, 60);
  ASSERT_GT(Grown(), 0u);
  const uint64_t ring = gpu_.live_bytes;
  gpu_.job_bytes = gpu_.gpu_bytes - ring - (8ull << 30);  // 8 GiB free: under a tenth
  ::testing::internal::CaptureStderr();
  const int refused = EnqueueWithPolls(dev, item, 60, 2000);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(gpu_.live_bytes, ring) << "no growth while the GPU is nearly full";
  EXPECT_GT(refused, 0);
  EXPECT_GT(CaptureCounters::Get().value(Counter::kRingGrowthRefused), 0u);
  EXPECT_NE(err.find("8192 of 81920 MiB free"), std::string::npos) << err;
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();
}

// Finding 4: grown chunks were held until the context was destroyed. Now a
// grown chunk empty for kIdlePollsBeforeRelease Polls is freed (the first
// chunk stays), and a later burst grows the ring again.
TEST_F(CudaDeviceTest, IdleGrownChunksAreGivenBack) {
  gpu_.gpu_bytes = 80ull << 30;
  gpu_.lag = 256;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  (void)EnqueueWithPolls(dev, item, 0, 1000);
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();
  const uint64_t grown = Grown();
  ASSERT_GT(grown, 0u);
  for (uint32_t i = 0; i + 1 < CudaDevice::kIdlePollsBeforeRelease; ++i) {
    dev.Poll([](uint64_t, std::span<const BufferStats>, bool) {});
  }
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingChunksFreed), 0u) << "not before the idle time";
  for (uint32_t i = 0; i < grown * CudaDevice::kIdlePollsBeforeRelease; ++i) {
    dev.Poll([](uint64_t, std::span<const BufferStats>, bool) {});
  }
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingChunksFreed), grown);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingChunksFreed), grown);
  EXPECT_EQ(gpu_.live_bytes, 64u << 20) << "the first chunk stays";
  EXPECT_GT(CaptureCounters::Get().value(Counter::kRingBytes), 64u << 20) << "the peak is kept";
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(dev.Enqueue(0x5, {&item, 1}, 5000 + i)) << i;
    if (i % 10 == 9) dev.Poll([](uint64_t, std::span<const BufferStats>, bool) {});
  }
  EXPECT_GT(Grown(), grown) << "grown again for the next burst";
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();
}

// The same step on a GPU with 512 MiB left: a 32nd of it is less than the
// first chunk, so the ring never grows; every refusal is counted, exactly.
TEST_F(CudaDeviceTest, ASmallBudgetDropsWholeMeasurementsAndCountsEachOne) {
  gpu_.gpu_bytes = 512ull << 20;
  gpu_.lag = 256;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 64 << 20});
  MeasureItem item{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  int accepted = 0, refused = 0, delivered = 0;
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 10000; ++i) {
    if (dev.Enqueue(0x5, {&item, 1}, i)) {
      ++accepted;
    } else {
      ++refused;
    }
    if (i % 100 == 99) dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  gpu_.catch_up = 2;  // the GPU finishes while Drain polls
  dev.Drain();
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  EXPECT_GT(refused, 0);
  EXPECT_EQ(accepted + refused, 10000);
  EXPECT_EQ(delivered, accepted) << "every accepted measurement completes";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingFull), static_cast<uint64_t>(refused))
      << "counted exactly";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kRingFull), static_cast<uint64_t>(refused));
  EXPECT_EQ(Grown(), 0u) << "64 MiB already is more than the budget (512 MiB / 32)";
  EXPECT_GT(CaptureCounters::Get().value(Counter::kRingGrowthRefused), 0u);
  EXPECT_EQ(gpu_.peak_bytes, 64ull << 20);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << "ring full, growth refused: " << err;
}

// Issue 18, item 5: preparing a context (module load, ring, pinned memory,
// events) ran under the device mutex, so a slow allocation stalled every
// other thread's launches. Now it runs outside it.
TEST_F(CudaDeviceTest, PreparingOneContextDoesNotStallLaunchesInAnother) {
  gpu_.contexts.reserve(64);
  gpu_.stream_ctx[0x7] = reinterpret_cast<CUcontext>(0xCA);
  gpu_.stream_ctx[0x8] = reinterpret_cast<CUcontext>(0xCB);
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xCB));
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu_.alloc_gate = true;
  bool slow_ok = false;
  std::thread slow([&] { slow_ok = dev.Enqueue(0x7, {&item, 1}, 1); });
  for (int i = 0; i < 5000 && !gpu_.in_alloc; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(gpu_.in_alloc.load()) << "the first launch in 0xCA is allocating";
  EXPECT_TRUE(dev.Enqueue(0x8, {&item, 1}, 2)) << "another context is measured meanwhile";
  EXPECT_FALSE(dev.Enqueue(0x7, {&item, 1}, 3)) << "0xCA is being prepared: refused, not waited for";
  EXPECT_TRUE(gpu_.in_alloc.load()) << "both answers came while the allocation was still stuck";
  gpu_.alloc_gate = false;
  slow.join();
  EXPECT_TRUE(slow_ok);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceUnprepared), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceUnprepared), 1u) << "the footer counts it";
  EXPECT_TRUE(dev.Enqueue(0x7, {&item, 1}, 4)) << "prepared now";
}

// CONTEXT_DESTROY_STARTING: the batches finish, every chunk is freed, and a
// context that later reuses the handle is prepared afresh.
TEST_F(CudaDeviceTest, ReleasingAContextFreesEveryChunkAndAReusedHandleStartsOver) {
  gpu_.gpu_bytes = 8ull << 30;
  gpu_.events_ready = false;
  CudaDevice dev(api_, kFatbin, {.device_memory = 16 << 20});
  MeasureItem big{0x7f00'0000'0000ull, 100'000'000, DType::kBF16};
  int accepted = 0, delivered = 0;
  for (int i = 0; i < 40; ++i) {
    accepted += dev.Enqueue(0x5, {&big, 1}, i) ? 1 : 0;
    if (i % 5 == 4) dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  }
  EXPECT_GT(Grown(), 0u);
  EXPECT_EQ(delivered, 0);
  gpu_.catch_up = 2;
  dev.ReleaseContext(0xC0);
  EXPECT_EQ(gpu_.live_bytes, 0u) << "every chunk freed";
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  EXPECT_EQ(delivered, accepted) << "waited for, and kept for the next Poll";
  gpu_.events_ready = true;
  ASSERT_TRUE(dev.Enqueue(0x5, {&big, 1}, 99)) << "prepared again";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kContextsPrepared), 2u);
  EXPECT_EQ(gpu_.live_bytes, 16u << 20);
}

// Review round 4, finding 6: Drain waited with cuEventSynchronize and no
// deadline, from the atexit handler; a stream that never drains (an NCCL
// kernel waiting for a peer that died) kept the process from exiting. Now
// it polls until options.exit_wait, then leaves what is unfinished.
TEST_F(CudaDeviceTest, DrainGivesUpAtItsDeadlineOnAStuckGpu) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20, .exit_wait = std::chrono::milliseconds(0)});
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu_.events_ready = false;
  gpu_.stuck = true;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, i));
  ::testing::internal::CaptureStderr();
  dev.Drain();
  dev.Drain();
  std::string err = ::testing::internal::GetCapturedStderr();
  int delivered = 0;
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  EXPECT_EQ(delivered, 0) << "unfinished: the engine writes those launches as dropped";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kExitWaitExpired), 2u) << "each expired wait";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "said once: " << err;
  EXPECT_NE(err.find("NUMTRACE_EXIT_WAIT"), std::string::npos) << err;
  EXPECT_NE(err.find("3 measurement batches"), std::string::npos) << err;
}

TEST_F(CudaDeviceTest, DrainPollsUntilTheWorkFinishes) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20, .exit_wait = std::chrono::seconds(600)});
  gpu_.events_ready = false;
  MeasureItem item{0x1000, 64, DType::kF32};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, i));
  gpu_.catch_up = 5;  // each batch finishes after a few polls
  dev.Drain();
  int delivered = 0;
  dev.Poll([&](uint64_t, std::span<const BufferStats>, bool) { ++delivered; });
  EXPECT_EQ(delivered, 3);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kExitWaitExpired), 0u);
}

// Finding 6: ReleaseContext (CUPTI's CONTEXT_DESTROY_STARTING, on the
// application's thread) waited under the device mutex with no deadline.
// Now it waits without the mutex - another context's launches go on - and
// on a stuck GPU gives up, freeing nothing (cuMemFree would wait too; the
// driver frees it with the context).
TEST_F(CudaDeviceTest, ReleasingAContextOnAStuckGpuWaitsBoundedAndWithoutTheMutex) {
  gpu_.contexts.reserve(64);
  gpu_.stream_ctx[0x8] = reinterpret_cast<CUcontext>(0xCB);
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20, .exit_wait = std::chrono::seconds(600)});
  ASSERT_TRUE(dev.PrepareContext(0xCB));
  MeasureItem item{0x1000, 64, DType::kF32};
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  const uint64_t live = gpu_.live_bytes;
  gpu_.events_ready = false;
  gpu_.stuck = true;
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 2));
  std::atomic<bool> released{false};
  std::thread destroyer([&] {
    dev.ReleaseContext(0xC0);
    released = true;
  });
  for (int i = 0; i < 5000 && gpu_.stuck_queries < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(released.load()) << "still waiting for the stuck batch";
  EXPECT_TRUE(dev.Enqueue(0x8, {&item, 1}, 3)) << "another context's launch is not blocked meanwhile";
  gpu_.stuck = false;
  gpu_.events_ready = true;
  destroyer.join();
  EXPECT_EQ(gpu_.live_bytes, live - (1u << 20)) << "0xC0's ring freed once its batches finished";
}

TEST_F(CudaDeviceTest, ReleasingAContextOnAStuckGpuGivesUpAndFreesNothing) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20, .exit_wait = std::chrono::milliseconds(0)});
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu_.events_ready = false;
  gpu_.stuck = true;
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  const uint64_t live = gpu_.live_bytes;
  ::testing::internal::CaptureStderr();
  dev.ReleaseContext(0xC0);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(gpu_.live_bytes, live) << "the stuck batch may still read its ring: not freed";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kExitWaitExpired), 1u);
  EXPECT_NE(err.find("NUMTRACE_EXIT_WAIT"), std::string::npos) << err;
  gpu_.stuck = false;
  gpu_.events_ready = true;
  EXPECT_TRUE(dev.Enqueue(0x5, {&item, 1}, 2)) << "a context reusing the handle is prepared afresh";
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kContextsPrepared), 2u);
}

// At process exit (after Shutdown) a context's destruction makes no driver
// call at all: bookkeeping only.
TEST_F(CudaDeviceTest, ForgettingAContextAtExitMakesNoDriverCall) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  MeasureItem item{0x1000, 64, DType::kF32};
  gpu_.events_ready = false;
  gpu_.stuck = true;
  ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, 1));
  const uint64_t live = gpu_.live_bytes;
  const size_t queries = gpu_.queried_in.size();
  dev.ForgetContext(0xC0);
  EXPECT_EQ(gpu_.queried_in.size(), queries) << "no event query";
  EXPECT_EQ(gpu_.live_bytes, live) << "no free";
}

// Finding 6, the dump copies: PollCopies(wait) synchronised each copy's
// event under the copier's mutex. Now it polls until the same deadline.
TEST_F(CudaDeviceTest, WaitingForDumpCopiesAtExitHasADeadline) {
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20, .exit_wait = std::chrono::milliseconds(0)});
  std::vector<float> x(64, 2.5f);
  const uint64_t base = reinterpret_cast<uint64_t>(x.data());
  gpu_.ranges[base] = x.size() * sizeof(float);
  MeasureItem items[1] = {{base, 256, DType::kF32}};
  gpu_.events_ready = false;
  gpu_.stuck = true;
  ASSERT_TRUE(dev.EnqueueCopy(0x5, items, 4));
  ::testing::internal::CaptureStderr();
  int calls = 0;
  dev.PollCopies([&](uint64_t, size_t, std::span<const uint8_t>, bool) { ++calls; }, /*wait=*/true);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kExitWaitExpired), 1u);
  EXPECT_NE(err.find("NUMTRACE_EXIT_WAIT"), std::string::npos) << err;
}

// Review round 4, finding 11: Enqueue held the device mutex across
// cuMemcpyHtoDAsync, cuLaunchKernel, cuMemcpyDtoHAsync and cuEventRecord
// (and cuEventCreate when the pool ran dry). Those block while a stream's
// launch queue is full, and every other launching thread and the writer's
// Poll then waited behind that one thread - with one thread per GPU, a
// deadlock once GPU 0's queue waits for GPU 1. Now ring space and the event
// are reserved under the mutex and the work is queued without it. Thread A
// blocks in one driver call (a latch in the fake); thread B must get
// launches measured in another context and in A's own, and a Poll, before
// A is let go. Before the fix B never returned (the deadline below ends the
// wait, then the latch opens so the test fails instead of hanging).
std::string CallName(const ::testing::TestParamInfo<FakeGpu::Call>& info) {
  static constexpr const char* kNames[] = {"None", "CopyIn", "Launch", "CopyOut", "Record", "EventCreate",
                                             "PointerQuery"};
  return kNames[static_cast<int>(info.param)];
}

class CudaDeviceBlockedCallTest : public CudaDeviceTest,
                                  public ::testing::WithParamInterface<FakeGpu::Call> {};

TEST_P(CudaDeviceBlockedCallTest, AnotherThreadsLaunchesAndPollDoNotWaitForIt) {
  gpu_.contexts.reserve(64);
  gpu_.stream_ctx[0x8] = reinterpret_cast<CUcontext>(0xCB);
  CudaDevice dev(api_, kFatbin, {.device_memory = 1 << 20});
  ASSERT_TRUE(dev.PrepareContext(0xC0));
  ASSERT_TRUE(dev.PrepareContext(0xCB));
  MeasureItem item{0x1000, 64, DType::kF32};
  std::set<uint64_t> expected = {1, 2, 3};
  if (GetParam() == FakeGpu::Call::kEventCreate) {
    // Empty 0xC0's event pool: A's batch must create its event.
    gpu_.events_ready = false;
    for (uint64_t t = 100; t < 100 + 64; ++t) {
      ASSERT_TRUE(dev.Enqueue(0x5, {&item, 1}, t));
      expected.insert(t);
    }
  }
  gpu_.blocking = GetParam();
  bool a_ok = false;
  std::thread a([&] {
    t_gated = true;
    a_ok = dev.Enqueue(0x5, {&item, 1}, 1);
  });
  {
    std::unique_lock<std::mutex> lock(gpu_.gate_mu);
    ASSERT_TRUE(gpu_.gate_cv.wait_for(lock, std::chrono::seconds(60), [&] { return gpu_.entered; }))
        << "thread A never reached the blocking call";
  }
  bool b_other = false, b_same = false, b_done = false;
  std::set<uint64_t> polled;
  std::thread b([&] {
    b_other = dev.Enqueue(0x8, {&item, 1}, 2);  // context 0xCB
    b_same = dev.Enqueue(0x5, {&item, 1}, 3);   // A's context 0xC0
    dev.Poll([&](uint64_t t, std::span<const BufferStats>, bool) { polled.insert(t); });
    std::lock_guard<std::mutex> lock(gpu_.gate_mu);
    b_done = true;
    gpu_.gate_cv.notify_all();
  });
  bool in_time = false;
  {
    std::unique_lock<std::mutex> lock(gpu_.gate_mu);
    in_time = gpu_.gate_cv.wait_for(lock, std::chrono::seconds(10), [&] { return b_done; });
    gpu_.open = true;  // let A go in either case: a failure must not hang
    gpu_.gate_cv.notify_all();
  }
  a.join();
  b.join();
  ASSERT_TRUE(in_time) << "thread B waited behind A's blocked driver call";
  EXPECT_TRUE(b_other);
  EXPECT_TRUE(b_same);
  EXPECT_EQ(polled.count(1), 0u) << "A's batch was not queued yet: its space and ticket stay";
  EXPECT_TRUE(a_ok);
  gpu_.events_ready = true;
  dev.Poll([&](uint64_t t, std::span<const BufferStats> s, bool failed) {
    EXPECT_FALSE(failed);
    EXPECT_EQ(s.size(), 1u);
    EXPECT_TRUE(polled.insert(t).second) << "ticket " << t << " twice";
  });
  EXPECT_EQ(polled, expected);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDeviceErrors), 0u);
}

INSTANTIATE_TEST_SUITE_P(EachAsyncCall, CudaDeviceBlockedCallTest,
                         ::testing::Values(FakeGpu::Call::kCopyIn, FakeGpu::Call::kLaunch,
                                           FakeGpu::Call::kCopyOut, FakeGpu::Call::kRecord,
                                           FakeGpu::Call::kEventCreate),
                         CallName);

TEST(ParseNvidiaDriverVersion, ProprietaryAndOpenModules) {
  EXPECT_EQ(ParseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 2025"),
            "580.95.05");
  EXPECT_EQ(ParseNvidiaDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                     "580.65.06  Release Build  (dvs-builder@U16-I3-B03-4-3)"),
            "580.65.06");
  EXPECT_EQ(ParseNvidiaDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64"), "");
  EXPECT_EQ(ParseNvidiaDriverVersion("something else 580.1"), "");
}

TEST(GpuUuidText, SpelledAsNvidiaSmiDoes) {
  const unsigned char bytes[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                                   0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  EXPECT_EQ(GpuUuidText(bytes), "GPU-12345678-9abc-def0-0123-456789abcdef");
}

TEST(ByteRing, FifoWrapAround) {
  ByteRing r(1024);
  EXPECT_EQ(r.Allocate(400, 1), 0u);
  EXPECT_EQ(r.Allocate(400, 1), 400u);
  EXPECT_FALSE(r.Allocate(400, 1).has_value()) << "224 left at the end, 0 at the front";
  r.ReleaseOldest();
  EXPECT_EQ(r.Allocate(300, 1), 0u) << "wraps to the front";
  EXPECT_FALSE(r.Allocate(200, 1).has_value()) << "would overrun the live block at 400";
  EXPECT_EQ(r.Allocate(100, 1), 300u);
  r.ReleaseOldest();  // the block at 400
  r.ReleaseOldest();  // 0
  r.ReleaseOldest();  // 300
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.Allocate(1024, 1), 0u);
  EXPECT_FALSE(r.Allocate(2048, 1).has_value());
  r.ReleaseNewest();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.Allocate(1, 256), 0u);
  EXPECT_EQ(r.Allocate(1, 256), 256u) << "aligned";
}

}  // namespace
}  // namespace numtrace::shim
