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
// cudaMallocAsync/cudaFreeAsync, plus a kernel without parameters through
// <<<>>> and cuLaunchKernel, and a cudaGetKernel handle (a CUkernel) given
// to cuLaunchKernel. Prints one line per case, e.g.
//   probe <<<>>>: runtime:__cudaLaunchKernel_v13000#12 driver:cuLaunchKernel#12
//   probe cublasLt: runtime:cudaLaunchKernel_v7000#40 driver:cuLaunchKernel#40
//   probe nccl: skip (libnccl.so.2 not found)
//   probe activity: kernels=9 internal_launches=0 unmatched=1
// and a verdict line:
//   probe verdict: driver callbacks cover all launch kinds
//   probe verdict: no driver callback for: <<<>>> cublasLt
// then, for each case, the handle `f` its driver launch callback carried and
// what numtrace's four handle queries answer for it (shim/cupti's
// Describe asks them; a wrong-kind handle must give an error, not a crash),
// in numtrace's order, each line flushed before the next handle so a crash
// names the handle and query it died in:
//   probe handle cuLaunchKernel(CUkernel): kind=CUkernel(cudaGetKernel) func_param0=201 ...
//   probe handle <<<>>>(no params): kind=CUfunction(cudaGetFuncBySymbol) func_param0=1 ...
//   probe handles: done
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
// Zero parameters: the parameter queries' index 0 does not exist.
__global__ void NoParams() {}

std::mutex g_mu;
std::vector<std::string> g_seen;
std::set<uint32_t> g_launch_correlations;  // ids of every launch callback seen
CUfunction g_last_f = nullptr;             // `f` of the last driver launch callback
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
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && d->functionParams != nullptr) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
        g_last_f = static_cast<const cuLaunchKernel_params*>(d->functionParams)->f;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
        g_last_f = static_cast<const cuLaunchKernel_ptsz_params*>(d->functionParams)->f;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
        g_last_f = static_cast<const cuLaunchKernelEx_params*>(d->functionParams)->f;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
        g_last_f = static_cast<const cuLaunchKernelEx_ptsz_params*>(d->functionParams)->f;
        break;
      default:
        break;
    }
  }
}

// The handle of the last driver launch callback since the last call.
CUfunction TakeHandle() {
  std::lock_guard<std::mutex> lock(g_mu);
  CUfunction f = g_last_f;
  g_last_f = nullptr;
  return f;
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

// --- what the handle queries answer per path's `f` --------------------------
struct HandleQueries {
  decltype(&cuFuncGetParamInfo) func_param = nullptr;
  decltype(&cuFuncGetName) func_name = nullptr;
  decltype(&cuKernelGetParamInfo) kernel_param = nullptr;
  decltype(&cuKernelGetName) kernel_name = nullptr;
};

struct Handle {
  std::string what;  // the case
  CUfunction f;      // as its driver launch callback carried it; null: none seen
};

// Prints one query's answer and flushes, so a crash in the next one still
// leaves this one on stdout.
void Say(const std::string& s) {
  std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
}

// In numtrace's order (shim/cupti Describe): the function queries, then the
// kernel ones.
void PrintHandle(const HandleQueries& q, const Handle& h, CUfunction by_symbol, CUfunction no_params_fn,
                 cudaKernel_t kernel, cudaKernel_t no_params_kernel) {
  if (h.f == nullptr) {
    Say("probe handle " + h.what + ": no driver launch callback carried a handle\n");
    return;
  }
  const void* f = reinterpret_cast<const void*>(h.f);
  const char* kind = "unknown(library)";
  if (f == reinterpret_cast<const void*>(by_symbol) || f == reinterpret_cast<const void*>(no_params_fn)) {
    kind = "CUfunction(cudaGetFuncBySymbol)";
  } else if (f == reinterpret_cast<const void*>(kernel) || f == reinterpret_cast<const void*>(no_params_kernel)) {
    kind = "CUkernel(cudaGetKernel)";
  }
  Say("probe handle " + h.what + ": kind=" + kind);
  size_t off = 0, size = 0;
  const char* name = nullptr;
  auto param = [&](const char* label, CUresult r) {
    Say(std::string(" ") + label + "=" + std::to_string(r) +
        (r == CUDA_SUCCESS ? "(" + std::to_string(off) + "," + std::to_string(size) + ")" : ""));
  };
  auto named = [&](const char* label, CUresult r) {
    Say(std::string(" ") + label + "=" + std::to_string(r) +
        (r == CUDA_SUCCESS && name != nullptr ? "(" + std::string(name).substr(0, 40) + ")" : ""));
  };
  if (q.func_param) param("func_param0", q.func_param(h.f, 0, &off, &size));
  if (q.func_name) named("func_name", q.func_name(&name, h.f));
  name = nullptr;
  if (q.kernel_param) param("kernel_param0", q.kernel_param(reinterpret_cast<CUkernel>(h.f), 0, &off, &size));
  if (q.kernel_name) named("kernel_name", q.kernel_name(&name, reinterpret_cast<CUkernel>(h.f)));
  Say("\n");
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
  std::vector<Handle> handles;
  // Records the case's callbacks and the handle its driver callback carried.
  auto done = [&](const std::string& what) {
    cudaDeviceSynchronize();
    cases.push_back({what, Take()});
    handles.push_back({what, TakeHandle()});
  };

  Probe<<<n / 256, 256>>>(out, n);
  done("<<<>>>");

  int count = n;
  void* args[] = {&out, &count};
  cudaLaunchKernel(reinterpret_cast<const void*>(&Probe), dim3(n / 256), dim3(256), args, 0, 0);
  done("cudaLaunchKernel");

  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(n / 256);
  config.blockDim = dim3(256);
  cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&Probe), args);
  done("cudaLaunchKernelExC");

  cudaFunction_t fn = nullptr, no_params_fn = nullptr;
  cudaKernel_t kernel = nullptr, no_params_kernel = nullptr;
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto launch = libcuda ? reinterpret_cast<decltype(&cuLaunchKernel)>(dlsym(libcuda, "cuLaunchKernel")) : nullptr;
  auto launch_ex = libcuda ? reinterpret_cast<decltype(&cuLaunchKernelEx)>(dlsym(libcuda, "cuLaunchKernelEx")) : nullptr;
  if (cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&Probe)) != cudaSuccess) fn = nullptr;
  if (cudaGetFuncBySymbol(&no_params_fn, reinterpret_cast<const void*>(&NoParams)) != cudaSuccess) no_params_fn = nullptr;
  if (cudaGetKernel(&kernel, reinterpret_cast<const void*>(&Probe)) != cudaSuccess) kernel = nullptr;
  if (cudaGetKernel(&no_params_kernel, reinterpret_cast<const void*>(&NoParams)) != cudaSuccess) no_params_kernel = nullptr;
  Take();
  TakeHandle();
  if (launch != nullptr && fn != nullptr) {
    launch(reinterpret_cast<CUfunction>(fn), n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    done("cuLaunchKernel");
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
    done("cuLaunchKernelEx");
  } else {
    cases.push_back({"cuLaunchKernelEx", "skip (no CUfunction)"});
  }
  // A CUkernel where a CUfunction is expected (cuLaunchKernel takes both):
  // numtrace's handle queries then see a CUkernel on the driver path.
  if (launch != nullptr && kernel != nullptr) {
    launch(reinterpret_cast<CUfunction>(kernel), n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    done("cuLaunchKernel(CUkernel)");
  } else {
    cases.push_back({"cuLaunchKernel(CUkernel)", "skip (no cudaGetKernel handle)"});
  }
  NoParams<<<1, 32>>>();
  done("<<<>>>(no params)");
  if (launch != nullptr && no_params_fn != nullptr) {
    launch(reinterpret_cast<CUfunction>(no_params_fn), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    done("cuLaunchKernel(no params)");
  } else {
    cases.push_back({"cuLaunchKernel(no params)", "skip (no CUfunction)"});
  }
  if (launch != nullptr && no_params_kernel != nullptr) {
    launch(reinterpret_cast<CUfunction>(no_params_kernel), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    done("cuLaunchKernel(CUkernel, no params)");
  } else {
    cases.push_back({"cuLaunchKernel(CUkernel, no params)", "skip (no cudaGetKernel handle)"});
  }

  const int m = 64;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  if (cudaMalloc(&a, m * m * 4) == cudaSuccess && cudaMalloc(&b, m * m * 4) == cudaSuccess &&
      cudaMalloc(&c, m * m * 4) == cudaSuccess) {
    cudaMemset(a, 0, m * m * 4);
    cudaMemset(b, 0, m * m * 4);
    cudaDeviceSynchronize();
    TakeHandle();
    cases.push_back({"cublasLt", CublasLtGemm(a, b, c, m)});
    handles.push_back({"cublasLt", TakeHandle()});
  }
  TakeHandle();
  cases.push_back({"nccl", NcclAllReduce(out, n)});
  handles.push_back({"nccl", TakeHandle()});

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
  std::fflush(stdout);
  // Last: a query that crashes must not take the answers above with it.
  HandleQueries q;
  if (libcuda != nullptr) {
    q.func_param = reinterpret_cast<decltype(q.func_param)>(dlsym(libcuda, "cuFuncGetParamInfo"));
    q.func_name = reinterpret_cast<decltype(q.func_name)>(dlsym(libcuda, "cuFuncGetName"));
    q.kernel_param = reinterpret_cast<decltype(q.kernel_param)>(dlsym(libcuda, "cuKernelGetParamInfo"));
    q.kernel_name = reinterpret_cast<decltype(q.kernel_name)>(dlsym(libcuda, "cuKernelGetName"));
  }
  for (const Handle& h : handles) {
    PrintHandle(q, h, reinterpret_cast<CUfunction>(fn), reinterpret_cast<CUfunction>(no_params_fn), kernel,
                no_params_kernel);
  }
  Say("probe handles: done\n");
  cudaFree(out);
  return 0;
}
