// File: test/gpu/shim/device_bench.cc
//
// Throughput of CudaDevice (the batched reduction the shim runs per launch)
// against a device-to-device copy of the same bytes, on the first GPU. Run
// by gpu-check.sh; prints "name GB/s" lines. Exits 3 without a GPU.
//
// Example:
//   device_bench 1024     # MiB per buffer; prints "reduce_f32_GBps 2510.4" ...
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "shim/driver/driver_api.h"
#include "shim/device/cuda_device.h"
#include "shim/reduce/reduction_fatbin.h"

using numtrace::DType;
using numtrace::shim::CudaDevice;
using numtrace::shim::DriverApi;
using numtrace::shim::MeasureItem;

int main(int argc, char** argv) {
  uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  uint64_t bytes = mib << 20;
  std::string error;
  DriverApi& cu = DriverApi::Instance();
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (!cu.Load(&error) || cu.cuInit(0) != CUDA_SUCCESS || cu.cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cu.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    std::fprintf(stderr, "device_bench: no GPU (%s)\n", error.c_str());
    return 3;
  }
  CUstream stream = nullptr;
  CUdeviceptr src = 0, dst = 0;
  if (cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      cu.cuMemAlloc_v2(&src, bytes) != CUDA_SUCCESS || cu.cuMemAlloc_v2(&dst, bytes) != CUDA_SUCCESS ||
      cu.cuMemsetD8_v2(src, 0x3c, bytes) != CUDA_SUCCESS) {
    std::fprintf(stderr, "device_bench: cannot allocate 2 x %llu MiB\n", (unsigned long long)mib);
    return 3;
  }
  cu.cuStreamSynchronize(CU_STREAM_LEGACY);
  auto seconds = [](auto t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const int reps = 5;
  // Copy baseline: reads and writes `bytes` (the reduction only reads them).
  cu.cuMemcpyDtoDAsync_v2(dst, src, bytes, stream);
  cu.cuStreamSynchronize(stream);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) cu.cuMemcpyDtoDAsync_v2(dst, src, bytes, stream);
  cu.cuStreamSynchronize(stream);
  double copy = seconds(t0);
  std::printf("d2d_copy_GBps %.1f\n", reps * bytes / copy / 1e9);

  CudaDevice device(cu, numtrace::shim::ReductionFatbin(), {.device_memory = 256ull << 20});
  if (!device.PrepareContext(0)) {  // the current context; the shim does this at context creation
    std::fprintf(stderr, "device_bench: PrepareContext failed\n");
    return 1;
  }
  for (DType t : {DType::kF32, DType::kBF16, DType::kRaw}) {
    MeasureItem item{src, bytes, t};
    uint64_t delivered = 0;
    if (!device.Enqueue(reinterpret_cast<uint64_t>(stream), {&item, 1}, 0)) {
      std::fprintf(stderr, "device_bench: Enqueue refused\n");
      return 1;
    }
    device.Drain();
    device.Poll([&](uint64_t, std::span<const numtrace::BufferStats>, bool) { ++delivered; });
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      if (!device.Enqueue(reinterpret_cast<uint64_t>(stream), {&item, 1}, i + 1)) return 1;
    }
    device.Drain();
    double s = seconds(t0);
    device.Poll([&](uint64_t, std::span<const numtrace::BufferStats>, bool) { ++delivered; });
    const char* name = t == DType::kF32 ? "f32" : t == DType::kBF16 ? "bf16" : "raw";
    std::printf("reduce_%s_GBps %.1f\n", name, reps * bytes / s / 1e9);
    if (delivered != reps + 1) {
      std::fprintf(stderr, "device_bench: %llu of %d results delivered\n",
                   (unsigned long long)delivered, reps + 1);
      return 1;
    }
  }
  return 0;
}
