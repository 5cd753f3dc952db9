// File: test/gpu/mlp_train/empty_kernels.cu
//
// Launch-overhead probe for gpu-check.sh: launches an empty kernel N times
// (after a warm-up) and prints the mean host time per launch in
// microseconds. Run it with and without LD_PRELOAD=libnumtrace.so (capture
// off) to get the shim's per-launch cost.
//
// Example:
//   empty_kernels 100000     # prints "us_per_launch 2.41"
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel(float* p) {
  if (p != nullptr && threadIdx.x == 1024) p[0] = 0.f;  // never true: keeps the parameter
}

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  float* buf = nullptr;
  if (cudaMalloc(&buf, 4096) != cudaSuccess) {
    std::fprintf(stderr, "empty_kernels: no GPU\n");
    return 3;
  }
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32>>>(buf);
  cudaDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) empty_kernel<<<1, 32>>>(buf);
  cudaDeviceSynchronize();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::printf("us_per_launch %.3f\n", us / n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
