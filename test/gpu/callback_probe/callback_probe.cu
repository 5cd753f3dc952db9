// File: test/gpu/callback_probe/callback_probe.cu
//
// Settles, on the GPU machine, the one fact the CUDA layer's design rests on
// and that no header tells: which CUPTI callbacks fire for a kernel launched
// the three ways a PyTorch job launches kernels - `<<<>>>` (ATen; nvcc 13
// lowers it to __cudaLaunchKernel), cudaLaunchKernel (libraries), and
// cuLaunchKernel (Triton). numtrace enables driver-domain launch callbacks
// only; if `<<<>>>` or cudaLaunchKernel raise no driver callback, ATen and
// library kernels would be invisible and the runtime domain must be enabled
// too (with a thread-local flag so a launch is not seen twice).
//
// Prints one line per launch kind with the launch callbacks seen, e.g.
//   probe <<<>>>: runtime:__cudaLaunchKernel_v13000 driver:cuLaunchKernel
// and a verdict line:
//   probe verdict: driver callbacks cover all launch kinds
// Exit: 0 measured (whatever the answer), 3 no libcupti, 4 subscribe
// refused, 5 no GPU.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

__global__ void Probe(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * i;
}

std::mutex g_mu;
std::vector<std::string> g_seen;
decltype(&cuptiGetCallbackName) g_name = nullptr;

void CUPTIAPI Record(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (d->callbackSite != CUPTI_API_ENTER) return;
  const char* name = nullptr;
  if (g_name == nullptr || g_name(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) return;
  if (std::strstr(name, "aunch") == nullptr) return;  // launch ids only
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back(std::string(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver:" : "runtime:") + name);
}

std::string Take() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string s;
  for (const std::string& x : g_seen) s += (s.empty() ? "" : " ") + x;
  g_seen.clear();
  return s.empty() ? "(none)" : s;
}

void* OpenCupti() {
  const char* env = std::getenv("NUMTRACE_CUPTI_LIB");
  const char* paths[] = {env, "/usr/local/cuda/lib64/libcupti.so.13",
                         "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13", "libcupti.so.13",
                         "libcupti.so"};
  for (const char* p : paths) {
    if (p == nullptr) continue;
    if (void* h = dlopen(p, RTLD_NOW | RTLD_GLOBAL)) return h;
  }
  return nullptr;
}

}  // namespace

int main() {
  void* cupti = OpenCupti();
  if (cupti == nullptr) {
    std::fprintf(stderr, "callback_probe: no libcupti found (set NUMTRACE_CUPTI_LIB)\n");
    return 3;
  }
  auto subscribe = reinterpret_cast<decltype(&cuptiSubscribe)>(dlsym(cupti, "cuptiSubscribe"));
  auto enable_domain =
      reinterpret_cast<decltype(&cuptiEnableDomain)>(dlsym(cupti, "cuptiEnableDomain"));
  g_name = reinterpret_cast<decltype(&cuptiGetCallbackName)>(dlsym(cupti, "cuptiGetCallbackName"));
  CUpti_SubscriberHandle sub = nullptr;
  if (subscribe == nullptr || enable_domain == nullptr || g_name == nullptr ||
      subscribe(&sub, &Record, nullptr) != CUPTI_SUCCESS ||
      enable_domain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS ||
      enable_domain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "callback_probe: could not subscribe to CUPTI\n");
    return 4;
  }
  const int n = 1024;
  float* out = nullptr;
  if (cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "callback_probe: no usable GPU\n");
    return 5;
  }
  cudaDeviceSynchronize();
  Take();

  Probe<<<n / 256, 256>>>(out, n);
  cudaDeviceSynchronize();
  const std::string chevrons = Take();

  int count = n;
  void* args[] = {&out, &count};
  cudaLaunchKernel(reinterpret_cast<const void*>(&Probe), dim3(n / 256), dim3(256), args, 0, 0);
  cudaDeviceSynchronize();
  const std::string runtime = Take();

  std::string driver = "(skipped: no CUfunction)";
  cudaFunction_t fn = nullptr;
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto launch = libcuda ? reinterpret_cast<decltype(&cuLaunchKernel)>(dlsym(libcuda, "cuLaunchKernel"))
                        : nullptr;
  if (launch != nullptr && cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&Probe)) == cudaSuccess) {
    launch(reinterpret_cast<CUfunction>(fn), n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    cudaDeviceSynchronize();
    driver = Take();
  }

  std::printf("probe <<<>>>: %s\n", chevrons.c_str());
  std::printf("probe cudaLaunchKernel: %s\n", runtime.c_str());
  std::printf("probe cuLaunchKernel: %s\n", driver.c_str());
  const bool covered = chevrons.find("driver:") != std::string::npos &&
                       runtime.find("driver:") != std::string::npos;
  std::printf("probe verdict: %s\n", covered ? "driver callbacks cover all launch kinds"
                                             : "runtime launches raise no driver callback");
  cudaFree(out);
  return 0;
}
