// File: test/gpu/cupti_holder/cupti_holder.cc
//
// Holds CUPTI's single subscriber slot (CUPTI 13.0), then does a little
// CUDA work and prints a result that must not change when libnumtrace.so is
// preloaded. The program links neither libcupti nor libcuda, so a preloaded
// numtrace waits for cuInit (CUDA_INJECTION64_PATH) and loses the race for
// CUPTI to the subscription made first in main: it must say so in exactly
// one stderr line naming "cupti_holder" and change nothing else.
//
// Exit: 0 done, 3 no libcupti, 4 subscribe refused, 5 no driver/GPU.
//
// Example:
//   LD_PRELOAD=lib/libnumtrace.so bin/cupti_holder
//   stdout: holder ok: devices 1 sum 261120
//   stderr: numtrace: CUPTI is already in use by cupti_holder ...
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void* OpenCupti() {
  std::vector<std::string> paths;
  if (const char* p = std::getenv("NUMTRACE_CUPTI_LIB")) paths.push_back(p);
  if (const char* h = std::getenv("CUDA_HOME")) {
    paths.push_back(std::string(h) + "/lib64/libcupti.so.13");
    paths.push_back(std::string(h) + "/extras/CUPTI/lib64/libcupti.so.13");
  }
  paths.push_back("/usr/local/cuda/lib64/libcupti.so.13");
  paths.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  paths.push_back("libcupti.so.13");
  paths.push_back("libcupti.so");
  for (const std::string& p : paths) {
    if (void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      std::fprintf(stderr, "cupti_holder: using %s\n", p.c_str());
      return h;
    }
  }
  return nullptr;
}

void CUPTIAPI NoOp(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

template <typename F>
F Sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

int main() {
  void* cupti = OpenCupti();
  if (cupti == nullptr) {
    std::fprintf(stderr, "cupti_holder: no libcupti found (set NUMTRACE_CUPTI_LIB)\n");
    return 3;
  }
  auto subscribe = Sym<decltype(&cuptiSubscribe_v2)>(cupti, "cuptiSubscribe_v2");
  if (subscribe == nullptr) return 3;
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "cupti_holder";
  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult r = subscribe(&sub, &NoOp, nullptr, &params);
  if (r != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti_holder: cuptiSubscribe_v2 failed (%d)\n", static_cast<int>(r));
    return 4;
  }

  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cuda == nullptr) return 5;
  auto init = Sym<decltype(&cuInit)>(cuda, "cuInit");
  auto count = Sym<decltype(&cuDeviceGetCount)>(cuda, "cuDeviceGetCount");
  auto get = Sym<decltype(&cuDeviceGet)>(cuda, "cuDeviceGet");
  auto retain = Sym<decltype(&cuDevicePrimaryCtxRetain)>(cuda, "cuDevicePrimaryCtxRetain");
  auto set = Sym<decltype(&cuCtxSetCurrent)>(cuda, "cuCtxSetCurrent");
  auto alloc = Sym<decltype(&cuMemAlloc_v2)>(cuda, "cuMemAlloc_v2");
  auto memset = Sym<decltype(&cuMemsetD8_v2)>(cuda, "cuMemsetD8_v2");
  auto dtoh = Sym<decltype(&cuMemcpyDtoH_v2)>(cuda, "cuMemcpyDtoH_v2");
  int n = 0;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUdeviceptr buf = 0;
  if (init == nullptr || init(0) != CUDA_SUCCESS || count(&n) != CUDA_SUCCESS || n == 0 ||
      get(&dev, 0) != CUDA_SUCCESS || retain(&ctx, dev) != CUDA_SUCCESS ||
      set(ctx) != CUDA_SUCCESS || alloc(&buf, 1024) != CUDA_SUCCESS) {
    std::fprintf(stderr, "cupti_holder: no usable GPU\n");
    return 5;
  }
  unsigned char host[1024];
  if (memset(buf, 0xFF, sizeof host) != CUDA_SUCCESS ||
      dtoh(host, buf, sizeof host) != CUDA_SUCCESS) {
    return 5;
  }
  unsigned long sum = 0;
  for (unsigned char c : host) sum += c;
  std::printf("holder ok: devices %d sum %lu\n", n, sum);
  return 0;
}
