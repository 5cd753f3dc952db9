// File: shim/api/injection.cc
//
// How libnumtrace.so wakes up inside an unmodified job, in two ways:
//   - LD_PRELOAD: the constructor below runs in EVERY process (sh, python,
//     cmake, DataLoader workers) and does no CUDA work. It reads the
//     configuration, then either subscribes at once (libcuda is already
//     loaded: the program links it) or points CUDA_INJECTION64_PATH at this
//     library, so the driver calls InitializeInjection at cuInit - only in
//     processes that really use CUDA. A process that never calls cuInit sees
//     no file, no stderr line and the same exit code.
//   - CUDA_INJECTION64_PATH=/path/libnumtrace.so alone (launchers that
//     rewrite LD_PRELOAD): the driver loads us at cuInit and calls
//     InitializeInjection.
// If CUDA_INJECTION64_PATH already names another tool (Nsight sets it), we
// cannot wait for cuInit and subscribe from the constructor instead; the
// loser of the race for CUPTI's one subscriber slot says so in one line.
//
// The engine starts at the first launch or allocation (never inside
// CUPTI's context-creation callback, where tools that allocate deadlock):
// Runtime::Start with a CudaDevice that prepares each context (kernel load,
// rings, pinned memory, events) at the first measurement in it, outside any
// stream capture (cuda_device.h). A context whose preparation fails prints
// one line and stays unmeasured (footer counter contexts_failed).
//
// NVTX step mode (NUMTRACE_STEP_MODE=nvtx:REGEX): NVTX reports ranges to
// CUPTI only when NVTX_INJECTION64_PATH names libcupti at the job's first
// NVTX call, so the constructor sets it (when unset) before main runs. Exit order: Runtime::Start registers its
// atexit handler after the CUDA runtime registered its own teardown (cudart
// initialises before it creates the context), so ours runs first, while the
// driver and the contexts are alive: Shutdown drains the device and writes
// the footer. cudart's teardown then destroys the contexts; their
// CONTEXT_DESTROY_STARTING callbacks free our rings. CUPTI is never
// unsubscribed at exit (late callbacks reach an engine that is shut down and
// ignores them). The destructor below covers programs that skip atexit
// handlers of dlopen'ed code.
//
// Example:
//   LD_PRELOAD=/opt/numtrace/libnumtrace.so python train.py
//   CUDA_INJECTION64_PATH=/opt/numtrace/libnumtrace.so torchrun ... train.py
#include <dlfcn.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "common/settings/config.h"
#include "common/settings/modes.h"
#include "common/settings/torch_alloc_conf.h"
#include "shim/cupti/cupti_session.h"
#include "shim/driver/driver_api.h"
#include "shim/driver/driver_range_oracle.h"
#include "shim/driver/library_finder.h"
#include "shim/device/cuda_device.h"
#include "shim/engine/runtime.h"
#include "shim/log/log.h"
#include "shim/reduce/reduction_fatbin.h"

namespace numtrace::shim {
namespace {

CudaDevice* g_device = nullptr;  // owned by the Runtime once started

// Before the footer: kernels that ran unmeasured become notes and counts.
void FinishActivity() { CuptiSession::Get().FinishActivity(Runtime::Get().sink()); }
// Each tick of the writer's thread: activity enabled once, flushed per step.
void WriterTick(bool step_ended) { CuptiSession::Get().WriterTick(Runtime::Get().sink(), step_ended); }

// libc10_cuda is loaded (PyTorch with CUDA) and its allocator is not told
// to use cudaMallocAsync: tensors live inside caching-allocator segments.
bool PyTorchCachingAllocatorLikely(const settings::Config& config) {
  if (config.allocator != settings::AllocatorMode::kCaching) return false;
  if (settings::FindTorchAllocConf([](const char* n) { return std::getenv(n); }).cuda_malloc_async()) return false;
  for (const std::string& path : LoadedLibraryPaths()) {
    if (path.find("libc10_cuda.so") != std::string::npos) return true;
  }
  return false;
}

EventSink* StartEngine(uint64_t context) {
  Runtime& rt = Runtime::Get();
  if (!rt.Configure()) return nullptr;
  DriverApi& cu = DriverApi::Instance();
  CudaDevice::Options options;
  options.device_memory = rt.config().device_memory;
  options.ring_max = rt.config().ring_max;
  options.exit_wait = std::chrono::seconds(rt.config().exit_wait_seconds);
  auto device = std::make_unique<CudaDevice>(cu, ReductionFatbin(), options);
  CudaDevice* raw = device.get();
  rt.SetBeforeShutdown(&FinishActivity);
  rt.SetWriterTick(&WriterTick);
  // Pointers no allocation callback reported are asked of the driver, once
  // a step (leaked: launches may still arrive during exit).
  static auto* driver_ranges = new DriverRangeOracle(cu);
  static auto* step_ranges = new StepRangeCache(driver_ranges);
  rt.SetRangeOracle(step_ranges);
  raw->SetRangeOracle(step_ranges);
  // The environment's device and library keys (docs/format.md), asked of
  // what is loaded already; nothing new is loaded or initialised.
  EnvironmentValues env;
  std::optional<DeviceInfo> info = QueryDeviceInfo(cu, context, &env);
  rt.AddEnvironment(env);
  rt.AddEnvironment(LoadedLibraryVersions(LoadedLibraryPaths()));
  EventSink* sink = rt.Start(std::move(device), std::move(info));
  if (sink != nullptr) g_device = raw;
  if (sink != nullptr && PyTorchCachingAllocatorLikely(rt.config())) sink->ExpectTensorMap();
  return sink;
}

// After Shutdown (process exit: cudart's teardown destroys the contexts)
// no driver call is made: the device may be stuck behind a kernel that
// never ends, and the driver frees everything with the context anyway.
void ContextDestroying(uint64_t context) {
  if (g_device == nullptr) return;
  if (Runtime::Get().shut_down()) {
    g_device->ForgetContext(context);
  } else {
    g_device->ReleaseContext(context);
  }
}

bool NvtxSteps() { return Runtime::Get().config().step_mode == settings::StepMode::kNvtx; }

// Subscribes to CUPTI; everything after this happens in callbacks.
void Activate() {
  if (!Runtime::Get().Configure()) return;  // also sets the log level
  SessionHooks hooks;
  hooks.start = &StartEngine;
  hooks.context_destroying = &ContextDestroying;
  hooks.nvtx_ranges = NvtxSteps();
  hooks.activity = Runtime::Get().config().activity;
  CuptiSession::Get().Start(hooks);
}

// Before the job's first NVTX call; a value set by the user (or a
// profiler) is kept. Finds libcupti without loading it.
void PointNvtxAtCupti() {
  if (!NvtxSteps()) return;
  const char* set = std::getenv("NVTX_INJECTION64_PATH");
  if (set != nullptr && set[0] != '\0') return;
  std::string path = NvtxInjectionPath();
  if (!path.empty()) setenv("NVTX_INJECTION64_PATH", path.c_str(), 0);
}

std::string OwnPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Activate), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) ? std::string(resolved) : std::string(info.dli_fname);
}

bool SameFile(const char* a, const std::string& b) {
  char resolved[PATH_MAX];
  return realpath(a, resolved) != nullptr && b == resolved;
}

__attribute__((constructor)) void OnLoad() {
  // No CUDA call here: this runs in every preloaded process.
  if (!Runtime::Get().Configure()) return;
  PointNvtxAtCupti();
  if (IsLoaded(LoadedLibraryPaths(), "libcuda.so")) {
    Activate();  // linked against libcuda: cuInit may come before any hook of ours
    return;
  }
  std::string self = OwnPath();
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection == nullptr || injection[0] == '\0') {
    if (!self.empty()) setenv("CUDA_INJECTION64_PATH", self.c_str(), 1);
    return;  // InitializeInjection runs at cuInit, if this process ever calls it
  }
  if (!self.empty() && SameFile(injection, self)) return;
  Activate();  // another tool owns the injection slot
}

__attribute__((destructor)) void OnUnload() {
  if (CuptiSession::Get().state() == SessionState::kActive) Runtime::Get().Shutdown();
}

}  // namespace
}  // namespace numtrace::shim

// Called by the driver at cuInit when CUDA_INJECTION64_PATH names this
// library. Returns 1 (success) even when numtrace stays inert: the job must
// run as without us.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  numtrace::shim::Runtime::Get().NoteCudaStarted();  // cuInit ran: the run's "started CUDA" count
  if (numtrace::shim::Runtime::Get().Configure()) {
    numtrace::shim::PointNvtxAtCupti();  // in time unless the job used NVTX before cuInit
  }
  numtrace::shim::Activate();
  return 1;
}
