// File: test/gpu/reduce/reduce_kernels_gpu_test.cc
//
// The embedded reduction kernels on a real GPU, launched exactly as
// batch_abi.h documents (cuLibraryLoadData + cuLaunchKernel), compared bit
// for bit with ReduceHost; plus a printed throughput figure. The driver is
// reached through dlopen + cuGetProcAddress, never linked, so the binary
// loads on a machine without one and every test skips with the reason.
#include <cuda.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shim/reduce/batch_abi.h"
#include "shim/reduce/host_reduce.h"
#include "shim/reduce/reduction_fatbin.h"
#include "test/shim/reduce/reduce_test_util.h"

namespace numtrace::shim {
namespace {

// Driver entry points by their base names (cuda.h maps them to _v2 types).
#define NT_DRIVER_FNS(X)                                                              \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)                      \
  X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuGetErrorString) \
  X(cuLibraryLoadData) X(cuLibraryGetKernel) X(cuLaunchKernel) X(cuMemAlloc)            \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD32)           \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)

struct Driver {
#define NT_DECL(name) decltype(&::name) name = nullptr;
  NT_DRIVER_FNS(NT_DECL)
#undef NT_DECL
  CUkernel kernel = nullptr;
  std::string error;  // why the kernels cannot run; empty when they can
  bool have_gpu = false;  // a GPU is here: from then on a failure is a test failure

  void Load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { error = std::string("no CUDA driver: ") + dlerror(); return; }
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);
    auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get) { error = "driver lacks cuGetProcAddress_v2 (older than CUDA 12)"; return; }
#define NT_LOAD(name)                                                                    \
  if (get(#name, reinterpret_cast<void**>(&name), 13000, CU_GET_PROC_ADDRESS_DEFAULT,   \
          nullptr) != CUDA_SUCCESS || !name) {                                          \
    error = "driver lacks " #name; return;                                              \
  }
    NT_DRIVER_FNS(NT_LOAD)
#undef NT_LOAD
    int count = 0;
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      error = "cuInit failed or no GPU";
      return;
    }
    if (cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
      error = "cannot make a context on GPU 0";
      return;
    }
    have_gpu = true;
    CUlibrary clib;
    const auto fb = ReductionFatbin();
    if (CUresult r = cuLibraryLoadData(&clib, fb.data(), nullptr, nullptr, 0, nullptr, nullptr, 0)) {
      error = "cuLibraryLoadData failed: " + Err(r);
      return;
    }
    if (CUresult r = cuLibraryGetKernel(&kernel, clib, kReduceBatchKernelName)) {
      error = "cuLibraryGetKernel failed: " + Err(r);
    }
  }
  std::string Err(CUresult r) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    return s ? s : std::to_string(static_cast<int>(r));
  }
};

Driver& Gpu() {
  static Driver* d = [] { auto* p = new Driver; p->Load(); return p; }();
  return *d;
}

#define CU_OK(call) ASSERT_EQ((call), CUDA_SUCCESS) << #call

struct HostBuffer {
  std::vector<uint8_t> bytes;
  DType dtype;
  uint32_t misalign = 0;  // device address offset from a 256-byte boundary
};

// Reduces every buffer in ONE launch, `launches` times (the counters must
// reset themselves between launches). Scratch is reused, as a stream would.
void ReduceOnGpu(const std::vector<HostBuffer>& bufs, int launches, std::vector<BufferStats>* out) {
  Driver& g = Gpu();
  std::vector<NtBatchItem> items(bufs.size());
  std::vector<CUdeviceptr> data(bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) {
    CU_OK(g.cuMemAlloc(&data[i], bufs[i].bytes.size() + 256));
    const CUdeviceptr at = data[i] + bufs[i].misalign;
    if (!bufs[i].bytes.empty()) {
      CU_OK(g.cuMemcpyHtoD(at, bufs[i].bytes.data(), bufs[i].bytes.size()));
    }
    // Result slots in reverse order: slot and item index are independent.
    items[i] = {at, bufs[i].bytes.size(), 0, 0, static_cast<uint32_t>(bufs[i].dtype),
                static_cast<uint32_t>(bufs.size() - 1 - i), 0};
  }
  const uint64_t tiles = NtPlanBatch(items.data(), static_cast<uint32_t>(items.size()));
  CUdeviceptr d_items, d_partials, d_counters, d_results;
  CU_OK(g.cuMemAlloc(&d_items, items.size() * sizeof(NtBatchItem)));
  CU_OK(g.cuMemAlloc(&d_partials, NtScratchBytes(tiles)));
  CU_OK(g.cuMemAlloc(&d_counters, items.size() * 4));
  CU_OK(g.cuMemAlloc(&d_results, items.size() * sizeof(BufferStats)));
  CU_OK(g.cuMemsetD32(d_counters, 0, items.size()));
  CU_OK(g.cuMemcpyHtoD(d_items, items.data(), items.size() * sizeof(NtBatchItem)));
  uint32_t count = static_cast<uint32_t>(items.size());
  void* params[] = {&d_items, &count, &d_partials, &d_counters, &d_results};
  for (int l = 0; l < launches; ++l) {
    CU_OK(g.cuMemsetD32(d_results, 0xdeadbeef, items.size() * sizeof(BufferStats) / 4));
    CU_OK(g.cuLaunchKernel(reinterpret_cast<CUfunction>(g.kernel), static_cast<unsigned>(tiles), 1, 1,
                           kNtBlockThreads, 1, 1, 0, nullptr, params, nullptr));
    CU_OK(g.cuCtxSynchronize());
  }
  std::vector<BufferStats> slots(items.size());
  CU_OK(g.cuMemcpyDtoH(slots.data(), d_results, slots.size() * sizeof(BufferStats)));
  out->resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) (*out)[i] = slots[items[i].result_slot];
  for (CUdeviceptr p : data) g.cuMemFree(p);
  for (CUdeviceptr p : {d_items, d_partials, d_counters, d_results}) g.cuMemFree(p);
}

class ReduceKernelsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    // No GPU: skip. A GPU whose driver refuses our fatbin: fail, not skip.
    if (!Gpu().have_gpu) GTEST_SKIP() << Gpu().error;
    ASSERT_TRUE(Gpu().error.empty()) << Gpu().error;
  }
};

TEST_F(ReduceKernelsGpu, EveryDtypeSizeAndAlignmentMatchesHostBits) {
  for (int ti = 0; ti < kDTypeCount; ++ti) {
    const DType t = static_cast<DType>(ti);
    std::vector<HostBuffer> bufs;
    uint32_t seed = 1;
    for (uint64_t n : {0, 1, 255, 4095, 4096, 4097, 300 * 4096 + 5, 1048579}) {
      for (unsigned flags : {testing::kRandomBits, testing::kSpecials, testing::kSubnormals}) {
        const uint64_t tail = seed % DTypeSize(t);
        bufs.push_back({testing::MakeBuffer(t, n, seed, flags, tail), t, (seed % 3) * 3});
        ++seed;
      }
    }
    std::vector<BufferStats> got;
    ReduceOnGpu(bufs, /*launches=*/2, &got);
    ASSERT_EQ(got.size(), bufs.size());
    for (size_t i = 0; i < bufs.size(); ++i) {
      const BufferStats want = ReduceHost(bufs[i].bytes.data(), bufs[i].bytes.size(), t);
      ASSERT_EQ(testing::StatsDiff(got[i], want), "")
          << DTypeName(t) << " bytes=" << bufs[i].bytes.size() << " buffer " << i;
    }
  }
}

TEST_F(ReduceKernelsGpu, MixedDtypeBatch) {
  std::vector<HostBuffer> bufs;
  for (int ti = 0; ti < kDTypeCount; ++ti) {
    const DType t = static_cast<DType>(ti);
    bufs.push_back({testing::MakeBuffer(t, 5000 + ti, 40 + ti, testing::kSpecials), t, 0});
  }
  std::vector<BufferStats> got;
  ReduceOnGpu(bufs, 1, &got);
  for (size_t i = 0; i < bufs.size(); ++i) {
    const BufferStats want = ReduceHost(bufs[i].bytes.data(), bufs[i].bytes.size(), bufs[i].dtype);
    ASSERT_EQ(testing::StatsDiff(got[i], want), "") << DTypeName(bufs[i].dtype);
  }
}

// Throughput, printed not asserted: 1 GiB of bf16-ish bytes.
TEST_F(ReduceKernelsGpu, ThroughputOneGiB) {
  Driver& g = Gpu();
  const uint64_t bytes = uint64_t{1} << 30;
  std::vector<uint8_t> host(bytes);
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i < bytes; i += 8) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    std::memcpy(&host[i], &x, 8);
  }
  for (DType t : {DType::kF32, DType::kBF16, DType::kF64}) {
    CUdeviceptr src, dst, d_items, d_partials, d_counters, d_results;
    CU_OK(g.cuMemAlloc(&src, bytes));
    CU_OK(g.cuMemAlloc(&dst, bytes));
    CU_OK(g.cuMemcpyHtoD(src, host.data(), bytes));
    NtBatchItem item{src, bytes, 0, 0, static_cast<uint32_t>(t), 0, 0};
    const uint64_t tiles = NtPlanBatch(&item, 1);
    CU_OK(g.cuMemAlloc(&d_items, sizeof item));
    CU_OK(g.cuMemAlloc(&d_partials, NtScratchBytes(tiles)));
    CU_OK(g.cuMemAlloc(&d_counters, 4));
    CU_OK(g.cuMemAlloc(&d_results, sizeof(BufferStats)));
    CU_OK(g.cuMemsetD32(d_counters, 0, 1));
    CU_OK(g.cuMemcpyHtoD(d_items, &item, sizeof item));
    uint32_t count = 1;
    void* params[] = {&d_items, &count, &d_partials, &d_counters, &d_results};
    CUevent e0, e1;
    CU_OK(g.cuEventCreate(&e0, 0));
    CU_OK(g.cuEventCreate(&e1, 0));
    const int iters = 10;
    float ms_reduce = 0, ms_copy = 0;
    CU_OK(g.cuLaunchKernel(reinterpret_cast<CUfunction>(g.kernel), tiles, 1, 1, kNtBlockThreads,
                           1, 1, 0, nullptr, params, nullptr));  // warm-up
    CU_OK(g.cuEventRecord(e0, nullptr));
    for (int i = 0; i < iters; ++i) {
      CU_OK(g.cuLaunchKernel(reinterpret_cast<CUfunction>(g.kernel), tiles, 1, 1, kNtBlockThreads,
                             1, 1, 0, nullptr, params, nullptr));
    }
    CU_OK(g.cuEventRecord(e1, nullptr));
    CU_OK(g.cuEventSynchronize(e1));
    CU_OK(g.cuEventElapsedTime(&ms_reduce, e0, e1));
    CU_OK(g.cuEventRecord(e0, nullptr));
    for (int i = 0; i < iters; ++i) CU_OK(g.cuMemcpyDtoD(dst, src, bytes));
    CU_OK(g.cuEventRecord(e1, nullptr));
    CU_OK(g.cuEventSynchronize(e1));
    CU_OK(g.cuEventElapsedTime(&ms_copy, e0, e1));
    BufferStats got;
    CU_OK(g.cuMemcpyDtoH(&got, d_results, sizeof got));
    const auto t0 = std::chrono::steady_clock::now();
    const BufferStats want = ReduceHost(host.data(), bytes, t);
    const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(testing::StatsDiff(got, want), "") << DTypeName(t);
    const double gib = static_cast<double>(bytes) / (1 << 30);
    std::printf("[bench] %s 1 GiB: reduce %.1f GB/s (%.3f ms), memcpyDtoD %.1f GB/s read "
                "(%.3f ms), host reference %.2f GB/s\n",
                std::string(DTypeName(t)).c_str(), gib * 1.073741824 * iters / (ms_reduce / 1e3),
                ms_reduce / iters, gib * 1.073741824 * iters / (ms_copy / 1e3), ms_copy / iters,
                gib * 1.073741824 / host_s);
    for (CUdeviceptr p : {src, dst, d_items, d_partials, d_counters, d_results}) g.cuMemFree(p);
  }
}

}  // namespace
}  // namespace numtrace::shim
