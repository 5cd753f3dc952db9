// File: test/gpu/callback_probe/callback_probe.cu
//
// Settles, on the GPU machine, what no header tells: which CUPTI callbacks
// fire (with their correlation ids) for each way a PyTorch job launches
// kernels and allocates memory, and whether CUPTI kernel activity records
// work there. numtrace enables the driver launch ids and, as witnesses, the
// runtime ones (docs/gpu.md, "Launch paths"); this probe tells which of the
// two does the work per path, so the footer counters of a real run can be
// read against it.
//
// Cases: `<<<>>>` (ATen; nvcc 13 lowers it to __cudaLaunchKernel),
// cudaLaunchKernel, cudaLaunchKernelExC (libraries), cuLaunchKernel,
// cuLaunchKernelEx (Triton), a cuBLASLt GEMM, an NCCL single-rank
// all-reduce (when libnccl loads and initialises on one GPU), and
// cudaMallocAsync/cudaFreeAsync. Prints one line per case, e.g.
//   probe <<<>>>: runtime:__cudaLaunchKernel_v13000#12 driver:cuLaunchKernel#12
//   probe cublasLt: runtime:cudaLaunchKernel_v7000#40 driver:cuLaunchKernel#40
//   probe nccl: skip (libnccl.so.2 not found)
//   probe activity: kernels=9 internal_launches=0 unmatched=1
// and a verdict line:
//   probe verdict: driver callbacks cover all launch kinds
//   probe verdict: no driver callback for: <<<>>> cublasLt
// Exit: 0 measured (whatever the answer), 3 no libcupti, 4 subscribe
// refused, 5 no GPU.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

__global__ void Probe(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * i;
}

std::mutex g_mu;
std::vector<std::string> g_seen;
std::set<uint32_t> g_launch_correlations;  // ids of every launch callback seen
decltype(&cuptiGetCallbackName) g_name = nullptr;

bool Interesting(const char* name) {
  return std::strstr(name, "aunch") != nullptr || std::strstr(name, "lloc") != nullptr ||
         std::strstr(name, "Free") != nullptr;
}

void CUPTIAPI Record(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (d->callbackSite != CUPTI_API_ENTER) return;
  const char* name = nullptr;
  if (g_name == nullptr || g_name(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) return;
  if (!Interesting(name)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back(std::string(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver:" : "runtime:") + name +
                   "#" + std::to_string(d->correlationId));
  if (std::strstr(name, "aunch") != nullptr) g_launch_correlations.insert(d->correlationId);
}

std::string Take() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string s;
  for (const std::string& x : g_seen) s += (s.empty() ? "" : " ") + x;
  g_seen.clear();
  return s.empty() ? "(none)" : s;
}

// --- kernel activity records (does CUPTI give them here?) -------------------
struct ActivityApi {
  decltype(&cuptiActivityRegisterCallbacks) reg = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityFlushAll) flush = nullptr;
  decltype(&cuptiActivityGetNextRecord) next = nullptr;
} g_act;
int g_kernels = 0, g_internal = 0, g_unmatched = 0;
std::vector<uint32_t> g_kernel_correlations;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, 1 << 20));
  *size = *buffer ? 1 << 20 : 0;
  *max = 0;
}
void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (valid > 0 && g_act.next(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ++g_kernels;
      g_kernel_correlations.push_back(reinterpret_cast<CUpti_ActivityKernel10*>(r)->correlationId);
    } else if (r->kind == CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API) {
      ++g_internal;
    }
  }
  std::free(buffer);
}

std::string StartActivity(void* cupti) {
  g_act.reg = reinterpret_cast<decltype(g_act.reg)>(dlsym(cupti, "cuptiActivityRegisterCallbacks"));
  g_act.enable = reinterpret_cast<decltype(g_act.enable)>(dlsym(cupti, "cuptiActivityEnable"));
  g_act.flush = reinterpret_cast<decltype(g_act.flush)>(dlsym(cupti, "cuptiActivityFlushAll"));
  g_act.next = reinterpret_cast<decltype(g_act.next)>(dlsym(cupti, "cuptiActivityGetNextRecord"));
  if (!g_act.reg || !g_act.enable || !g_act.flush || !g_act.next) return "no activity functions";
  CUptiResult r = g_act.reg(&BufferRequested, &BufferCompleted);
  if (r != CUPTI_SUCCESS) return "register refused " + std::to_string(r);
  r = g_act.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) return "CONCURRENT_KERNEL refused " + std::to_string(r);
  r = g_act.enable(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API);
  if (r != CUPTI_SUCCESS) return "INTERNAL_LAUNCH_API refused " + std::to_string(r);
  return "";
}

void* OpenFirst(const char* env, std::initializer_list<const char*> names) {
  if (const char* e = std::getenv(env)) {
    if (void* h = dlopen(e, RTLD_NOW | RTLD_GLOBAL)) return h;
  }
  for (const char* p : names) {
    if (void* h = dlopen(p, RTLD_NOW | RTLD_GLOBAL)) return h;
  }
  return nullptr;
}

std::string CublasLtGemm(float* a, float* b, float* c, int n) {
  void* lib = OpenFirst("NUMTRACE_PROBE_CUBLASLT", {"libcublasLt.so.13", "libcublasLt.so"});
  if (lib == nullptr) return "skip (libcublasLt.so.13 not found; set NUMTRACE_PROBE_CUBLASLT)";
#define SYM(fn) auto fn##_p = reinterpret_cast<decltype(&fn)>(dlsym(lib, #fn))
  SYM(cublasLtCreate);
  SYM(cublasLtMatmulDescCreate);
  SYM(cublasLtMatrixLayoutCreate);
  SYM(cublasLtMatmul);
#undef SYM
  if (!cublasLtCreate_p || !cublasLtMatmulDescCreate_p || !cublasLtMatrixLayoutCreate_p || !cublasLtMatmul_p) {
    return "skip (cuBLASLt symbols missing)";
  }
  cublasLtHandle_t h = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  if (cublasLtCreate_p(&h) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulDescCreate_p(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate_p(&la, CUDA_R_32F, n, n, n) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate_p(&lb, CUDA_R_32F, n, n, n) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate_p(&lc, CUDA_R_32F, n, n, n) != CUBLAS_STATUS_SUCCESS) {
    return "skip (cuBLASLt setup failed)";
  }
  Take();
  float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t s = cublasLtMatmul_p(h, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, nullptr,
                                      nullptr, 0, nullptr);
  cudaDeviceSynchronize();
  std::string seen = Take();
  return s == CUBLAS_STATUS_SUCCESS ? seen : "fail (cublasLtMatmul status " + std::to_string(s) + ") " + seen;
}

// NCCL's C API, declared here (the probe builds where nccl.h may be absent).
using NcclComm = void*;
std::string NcclAllReduce(float* buf, int n) {
  void* lib = OpenFirst("NUMTRACE_PROBE_NCCL", {"libnccl.so.2", "libnccl.so"});
  if (lib == nullptr) return "skip (libnccl.so.2 not found; set NUMTRACE_PROBE_NCCL)";
  using InitAll = int (*)(NcclComm*, int, const int*);
  using AllReduce = int (*)(const void*, void*, size_t, int, int, NcclComm, cudaStream_t);
  auto init = reinterpret_cast<InitAll>(dlsym(lib, "ncclCommInitAll"));
  auto reduce = reinterpret_cast<AllReduce>(dlsym(lib, "ncclAllReduce"));
  if (init == nullptr || reduce == nullptr) return "skip (NCCL symbols missing)";
  NcclComm comm = nullptr;
  int dev = 0;
  if (int r = init(&comm, 1, &dev); r != 0) return "skip (ncclCommInitAll failed: " + std::to_string(r) + ")";
  Take();
  constexpr int kFloat32 = 7, kSum = 0;  // ncclFloat32, ncclSum
  int r = reduce(buf, buf, n, kFloat32, kSum, comm, nullptr);
  cudaDeviceSynchronize();
  std::string seen = Take();
  return r == 0 ? seen : "fail (ncclAllReduce " + std::to_string(r) + ") " + seen;
}

bool HasDriverLaunch(const std::string& seen) {
  return seen.find("driver:cuLaunch") != std::string::npos;
}

}  // namespace

int main() {
  void* cupti = OpenFirst("NUMTRACE_CUPTI_LIB", {"/usr/local/cuda/lib64/libcupti.so.13",
                                                 "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                                 "libcupti.so.13", "libcupti.so"});
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
  const std::string activity_error = StartActivity(cupti);
  const int n = 1024;
  float* out = nullptr;
  if (cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "callback_probe: no usable GPU\n");
    return 5;
  }
  cudaDeviceSynchronize();
  Take();
  std::vector<std::pair<std::string, std::string>> cases;

  Probe<<<n / 256, 256>>>(out, n);
  cudaDeviceSynchronize();
  cases.push_back({"<<<>>>", Take()});

  int count = n;
  void* args[] = {&out, &count};
  cudaLaunchKernel(reinterpret_cast<const void*>(&Probe), dim3(n / 256), dim3(256), args, 0, 0);
  cudaDeviceSynchronize();
  cases.push_back({"cudaLaunchKernel", Take()});

  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(n / 256);
  config.blockDim = dim3(256);
  cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&Probe), args);
  cudaDeviceSynchronize();
  cases.push_back({"cudaLaunchKernelExC", Take()});

  cudaFunction_t fn = nullptr;
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto launch = libcuda ? reinterpret_cast<decltype(&cuLaunchKernel)>(dlsym(libcuda, "cuLaunchKernel")) : nullptr;
  auto launch_ex = libcuda ? reinterpret_cast<decltype(&cuLaunchKernelEx)>(dlsym(libcuda, "cuLaunchKernelEx")) : nullptr;
  if (cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&Probe)) != cudaSuccess) fn = nullptr;
  if (launch != nullptr && fn != nullptr) {
    launch(reinterpret_cast<CUfunction>(fn), n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    cudaDeviceSynchronize();
    cases.push_back({"cuLaunchKernel", Take()});
  } else {
    cases.push_back({"cuLaunchKernel", "skip (no CUfunction)"});
  }
  if (launch_ex != nullptr && fn != nullptr) {
    CUlaunchConfig c = {};
    c.gridDimX = n / 256;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 256;
    c.blockDimY = c.blockDimZ = 1;
    launch_ex(&c, reinterpret_cast<CUfunction>(fn), args, nullptr);
    cudaDeviceSynchronize();
    cases.push_back({"cuLaunchKernelEx", Take()});
  } else {
    cases.push_back({"cuLaunchKernelEx", "skip (no CUfunction)"});
  }

  const int m = 64;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  if (cudaMalloc(&a, m * m * 4) == cudaSuccess && cudaMalloc(&b, m * m * 4) == cudaSuccess &&
      cudaMalloc(&c, m * m * 4) == cudaSuccess) {
    cudaMemset(a, 0, m * m * 4);
    cudaMemset(b, 0, m * m * 4);
    cudaDeviceSynchronize();
    cases.push_back({"cublasLt", CublasLtGemm(a, b, c, m)});
  }
  cases.push_back({"nccl", NcclAllReduce(out, n)});

  Take();
  void* pooled = nullptr;
  cudaMallocAsync(&pooled, 4096, nullptr);
  cudaFreeAsync(pooled, nullptr);
  cudaDeviceSynchronize();
  const std::string malloc_async = Take();

  std::string missing;
  for (const auto& [what, seen] : cases) {
    std::printf("probe %s: %s\n", what.c_str(), seen.c_str());
    if (seen.rfind("skip", 0) != 0 && !HasDriverLaunch(seen)) missing += " " + what;
  }
  std::printf("probe cudaMallocAsync/FreeAsync: %s\n", malloc_async.c_str());
  if (activity_error.empty()) {
    g_act.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(g_mu);
    for (uint32_t corr : g_kernel_correlations) g_unmatched += g_launch_correlations.count(corr) == 0;
    std::printf("probe activity: kernels=%d internal_launches=%d unmatched=%d\n", g_kernels, g_internal,
                g_unmatched);
  } else {
    std::printf("probe activity: refused (%s)\n", activity_error.c_str());
  }
  if (missing.empty()) {
    std::printf("probe verdict: driver callbacks cover all launch kinds\n");
  } else {
    std::printf("probe verdict: no driver callback for:%s\n", missing.c_str());
  }
  cudaFree(out);
  return 0;
}
