// File: shim/device/cuda_device.cc
//
// The GPU Device: batched reductions on the launch's stream; see cuda_device.h.
#include "shim/device/cuda_device.h"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "shim/cupti/check.h"
#include "shim/log/log.h"
#include "shim/cupti/driver_api.h"
#include "shim/cupti/driver_range_oracle.h"
#include "shim/cupti/relaxed_capture_scope.h"
#include "shim/cupti/self_call_guard.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/range_oracle.h"
#include "shim/reduce/batch_abi.h"

namespace numtrace::shim {
namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Events made when a context is prepared: enough for the batches in flight of a
// normal step; more are created (relaxed mode) only when they run out.
constexpr int kPreparedEvents = 64;

// Byte layout of one batch of m items and `tiles` tiles. Device:
// items | counters | partials | results. Host: items | counters (staged,
// copied in one H2D) then results (copied back in one D2H).
struct BatchLayout {
  uint64_t items, counters, partials, results;  // device offsets within the batch
  uint64_t device_bytes;
  uint64_t staged_bytes;  // items + counters
  uint64_t host_results, host_bytes;

  BatchLayout(uint32_t m, uint64_t tiles) {
    items = 0;
    counters = uint64_t{m} * sizeof(NtBatchItem);
    partials = AlignUp(counters + uint64_t{m} * 4, 16);
    results = AlignUp(partials + NtScratchBytes(tiles), 16);
    device_bytes = results + uint64_t{m} * sizeof(BufferStats);
    staged_bytes = counters + uint64_t{m} * 4;
    host_results = AlignUp(staged_bytes, 16);
    host_bytes = host_results + uint64_t{m} * sizeof(BufferStats);
  }
};

// Makes `context` current on the calling thread for the scope when it is
// not already: the engine's poller and the exit handler run on threads
// where no context (or another device's) is current, and event queries and
// frees act on the current context.
class ContextScope {
 public:
  ContextScope(const DriverApi& api, uint64_t context) : api_(api) {
    CUcontext current = nullptr;
    if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS) current = nullptr;
    if (reinterpret_cast<uint64_t>(current) == context) return;
    pushed_ = api_.cuCtxPushCurrent_v2(reinterpret_cast<CUcontext>(context)) == CUDA_SUCCESS;
  }
  ~ContextScope() {
    if (!pushed_) return;
    CUcontext popped = nullptr;
    api_.cuCtxPopCurrent_v2(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const DriverApi& api_;
  bool pushed_ = false;
};

std::string DriverVersionFromProc() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return {};
  return ParseNvidiaDriverVersion(line);
}

}  // namespace

std::string ParseNvidiaDriverVersion(std::string_view line) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  ..." or, for
  // the open modules H100/H200 machines run, "... Open Kernel Module for
  // x86_64  580.95.05  Release Build ...": the first token after "Kernel
  // Module" that starts with a digit.
  size_t at = line.find("Kernel Module");
  if (at == std::string_view::npos) return {};
  size_t i = at + 13;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t end = line.find(' ', i);
    if (end == std::string_view::npos) end = line.size();
    if (i < end && line[i] >= '0' && line[i] <= '9') return std::string(line.substr(i, end - i));
    i = end;
  }
  return {};
}

std::optional<uint64_t> ByteRing::Allocate(uint64_t bytes, uint64_t align) {
  bytes = AlignUp(bytes == 0 ? 1 : bytes, align);
  if (bytes > size_) return std::nullopt;
  if (live_.empty()) {
    live_.push_back({0, bytes});
    return 0;
  }
  uint64_t head = live_.back().offset + live_.back().bytes;
  uint64_t tail = live_.front().offset;
  if (head > tail) {
    // Not wrapped: room after head, else wrap to 0 when the front has moved on.
    if (head + bytes <= size_) {
      live_.push_back({head, bytes});
      return head;
    }
    if (bytes <= tail) {
      live_.push_back({0, bytes});
      return 0;
    }
    return std::nullopt;
  }
  // Wrapped: room between head and the oldest allocation.
  if (head + bytes <= tail) {
    live_.push_back({head, bytes});
    return head;
  }
  return std::nullopt;
}

void ByteRing::ReleaseOldest() {
  if (!live_.empty()) live_.pop_front();
}

void ByteRing::ReleaseNewest() {
  if (!live_.empty()) live_.pop_back();
}

std::optional<DeviceInfo> QueryDeviceInfo(const DriverApi& api, uint64_t context) {
  SelfCallGuard guard;
  bool pushed = false;
  if (context != 0) {
    pushed = api.cuCtxPushCurrent_v2(reinterpret_cast<CUcontext>(context)) == CUDA_SUCCESS;
  }
  DeviceInfo info;
  CUdevice dev = 0;
  bool ok = api.cuCtxGetDevice(&dev) == CUDA_SUCCESS;
  if (ok) {
    char name[256] = {};
    int major = 0, minor = 0, version = 0;
    api.cuDeviceGetName(name, sizeof name - 1, dev);
    api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    api.cuDriverGetVersion(&version);
    info.index = dev;
    info.name = name;
    info.cc = std::to_string(major) + "." + std::to_string(minor);
    info.cuda = std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
    info.driver = DriverVersionFromProc();
  }
  if (pushed) {
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent_v2(&popped);
  }
  if (!ok) return std::nullopt;
  return info;
}

CudaDevice::CudaDevice(const DriverApi& api, std::span<const uint8_t> fatbin, Options options)
    : api_(api), fatbin_(fatbin), options_(options) {
  if (options_.host_memory == 0) {
    options_.host_memory = std::max<uint64_t>(options_.device_memory / 16, 1ull << 20);
  }
}

bool CudaDevice::LoadKernelLocked() {
  if (kernel_ != nullptr) return true;
  if (kernel_failed_) return false;
  CUlibrary lib = nullptr;
  CUkernel kernel = nullptr;
  // Context-independent loading: one CUlibrary serves every context.
  if (!NUMTRACE_CU_CHECK(api_.cuLibraryLoadData(&lib, fatbin_.data(), nullptr, nullptr, 0, nullptr,
                                                nullptr, 0)) ||
      !NUMTRACE_CU_CHECK(api_.cuLibraryGetKernel(&kernel, lib, kReduceBatchKernelName))) {
    kernel_failed_ = true;
    log::Warn("cannot load the reduction kernels for this GPU; kernels are listed without stats");
    return false;
  }
  library_ = lib;
  kernel_ = kernel;
  return true;
}

CudaDevice::Context* CudaDevice::ContextForStreamLocked(void* stream) {
  CUcontext ctx = nullptr;
  // cuStreamGetCtx answers for the legacy and per-thread handles too (the
  // calling thread's context); fall back to the current context on error.
  if (api_.cuStreamGetCtx(static_cast<CUstream>(stream), &ctx) != CUDA_SUCCESS || ctx == nullptr) {
    if (api_.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr) return nullptr;
  }
  uint64_t handle = reinterpret_cast<uint64_t>(ctx);
  for (auto& c : contexts_) {
    if (c->handle == handle) return c->failed ? nullptr : c.get();
  }
  return PrepareLocked(handle);
}

bool CudaDevice::PrepareContext(uint64_t context) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);
  std::lock_guard<std::mutex> lock(mu_);
  if (context == 0) {
    CUcontext current = nullptr;
    if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == nullptr) return false;
    context = reinterpret_cast<uint64_t>(current);
  }
  for (auto& c : contexts_) {
    if (c->handle == context) return !c->failed;
  }
  return PrepareLocked(context) != nullptr;
}

CudaDevice::Context* CudaDevice::PrepareLocked(uint64_t context) {
  CUcontext current = nullptr;
  if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS) current = nullptr;
  bool pushed = false;
  if (reinterpret_cast<uint64_t>(current) != context) {
    pushed = api_.cuCtxPushCurrent_v2(reinterpret_cast<CUcontext>(context)) == CUDA_SUCCESS;
    if (!pushed) {
      CaptureCounters::Get().Add(Counter::kContextsFailed);
      log::Warn("cannot make CUDA context {:#x} current; not measuring in it", context);
      return nullptr;  // not remembered: a later launch may try again
    }
  }
  auto c = std::make_unique<Context>();
  c->handle = context;
  c->failed = !InitLocked(*c);
  CaptureCounters::Get().Add(c->failed ? Counter::kContextsFailed : Counter::kContextsPrepared);
  Context* result = c->failed ? nullptr : c.get();
  contexts_.push_back(std::move(c));
  if (pushed) {
    CUcontext popped = nullptr;
    api_.cuCtxPopCurrent_v2(&popped);
  }
  return result;
}

void CudaDevice::ConfirmRanges(std::span<const MeasureItem> items, std::vector<MeasureItem>* out) {
  out->assign(items.begin(), items.end());
  for (MeasureItem& it : *out) {
    if (it.bytes == 0) continue;
    uint64_t start = 0, size = 0;
    bool known = false;
    if (ranges_ != nullptr) {
      if (std::optional<Allocation> a = ranges_->Confirm(it.address)) {
        start = a->start;
        size = a->bytes;
        known = true;
      }
    } else if (std::optional<Allocation> a = MappedRange(api_, it.address)) {
      start = a->start;  // bounded by what is mapped (cuMemGetAddressRange)
      size = a->bytes;
      known = true;
    }
    bool ok = known && start != 0 && start <= it.address && it.address - start <= size &&
              it.bytes <= size - (it.address - start);
    if (ok) {
      CaptureCounters::Get().Add(Counter::kRangesConfirmed);
      continue;
    }
    CaptureCounters::Get().Add(Counter::kRangesUnconfirmed);
    CaptureCounters::Get().Add(Counter::kBuffersSkipped);
    if (!warned_unconfirmed_.exchange(true)) {
      log::Warn("buffer {:#x} ({} bytes) is not a mapped device range the driver confirms; "
                "skipped (footer counter ranges_unconfirmed counts every such buffer)",
                it.address, it.bytes);
    }
    it.bytes = 0;  // measured over nothing: never read
  }
}

bool CudaDevice::InitLocked(Context& c) {
  if (!LoadKernelLocked()) return false;
  CUfunction function = nullptr;
  // Loads the library into this context now, not lazily at our first
  // launch (which may sit inside the application's stream capture).
  if (!NUMTRACE_CU_CHECK(
          api_.cuKernelGetFunction(&function, reinterpret_cast<CUkernel>(kernel_)))) {
    log::Warn("cannot load the reduction kernel into CUDA context {:#x}; not measuring in it",
              c.handle);
    return false;
  }
  CUdeviceptr base = 0;
  void* host = nullptr;
  if (!NUMTRACE_CU_CHECK(api_.cuMemAlloc_v2(&base, options_.device_memory))) {
    log::Warn("cannot allocate {} MiB of device memory (NUMTRACE_DEVICE_MEMORY); not measuring",
              options_.device_memory >> 20);
    return false;
  }
  if (!NUMTRACE_CU_CHECK(
          api_.cuMemHostAlloc(&host, options_.host_memory, CU_MEMHOSTALLOC_PORTABLE))) {
    api_.cuMemFree_v2(base);
    log::Warn("cannot allocate {} MiB of pinned host memory; not measuring",
              options_.host_memory >> 20);
    return false;
  }
  c.function = function;
  c.device_base = base;
  c.host_base = static_cast<uint8_t*>(host);
  c.device_ring = ByteRing(options_.device_memory);
  c.host_ring = ByteRing(options_.host_memory);
  for (int i = 0; i < kPreparedEvents; ++i) {
    CUevent e = nullptr;
    if (api_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) break;
    c.free_events.push_back(e);
  }
  return true;
}

bool CudaDevice::AcquireEventLocked(Context& c, void** event) {
  if (!c.free_events.empty()) {
    *event = c.free_events.back();
    c.free_events.pop_back();
    return true;
  }
  CUevent e = nullptr;
  if (!NUMTRACE_CU_CHECK(api_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING))) return false;
  *event = e;
  return true;
}

bool CudaDevice::Enqueue(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket) {
  SelfCallGuard guard;
  auto* s = reinterpret_cast<CUstream>(stream);
  // No capture query here: the engine never asks for a measurement on a
  // capturing stream (LaunchEvent::stream_capturing, asked once per launch
  // by the switchboard) - one path for that bit.
  uint32_t m = static_cast<uint32_t>(items.size());
  RelaxedCaptureScope relaxed(api_);
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = ContextForStreamLocked(s);
  if (c == nullptr) {
    stats_.unprepared.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ConfirmRanges(items, &confirmed_);
  items = confirmed_;
  RetireLocked(*c, /*wait=*/false);  // recycle space before asking for more

  // Stage the items in pinned memory first: planning needs them, and the
  // H2D copy reads them from there.
  uint64_t tiles = 0;
  for (const MeasureItem& it : items) tiles += TileCount(it.bytes, it.dtype);
  BatchLayout L(m, tiles);
  if (tiles > 0x7fffffffull) {
    stats_.full.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::optional<uint64_t> host_off = c->host_ring.Allocate(L.host_bytes);
  if (!host_off) {
    stats_.full.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::optional<uint64_t> dev_off = c->device_ring.Allocate(L.device_bytes);
  if (!dev_off) {
    c->host_ring.ReleaseNewest();  // keep the two rings in step
    stats_.full.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  void* acquired = nullptr;
  if (!AcquireEventLocked(*c, &acquired)) {
    // Nothing was queued yet: give the space back instead of losing the context.
    c->device_ring.ReleaseNewest();
    c->host_ring.ReleaseNewest();
    stats_.errors.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  auto* event = static_cast<CUevent>(acquired);
  uint8_t* host = c->host_base + *host_off;
  auto* staged = reinterpret_cast<NtBatchItem*>(host);
  for (uint32_t i = 0; i < m; ++i) {
    staged[i] = NtBatchItem{items[i].address, items[i].bytes, 0, 0,
                            static_cast<uint32_t>(items[i].dtype), i, 0};
  }
  NtPlanBatch(staged, m);
  std::memset(host + L.counters, 0, uint64_t{m} * 4);

  CUdeviceptr dev = c->device_base + *dev_off;
  CUdeviceptr items_dev = dev + L.items, counters_dev = dev + L.counters;
  CUdeviceptr partials_dev = dev + L.partials, results_dev = dev + L.results;
  void* params[] = {&items_dev, &m, &partials_dev, &counters_dev, &results_dev};
  bool ok = m == 0 ||
            (NUMTRACE_CU_CHECK(api_.cuMemcpyHtoDAsync_v2(dev, host, L.staged_bytes, s)) &&
             NUMTRACE_CU_CHECK(api_.cuLaunchKernel(static_cast<CUfunction>(c->function),
                                                   static_cast<unsigned>(tiles), 1, 1,
                                                   kNtBlockThreads, 1, 1, 0, s, params, nullptr)) &&
             NUMTRACE_CU_CHECK(api_.cuMemcpyDtoHAsync_v2(host + L.host_results, results_dev,
                                                         uint64_t{m} * sizeof(BufferStats), s)));
  ok = ok && NUMTRACE_CU_CHECK(api_.cuEventRecord(event, s));
  if (!ok) {
    // Work may already be queued on the stream that reads this space, so the
    // space stays taken until an event recorded now completes.
    if (api_.cuEventRecord(event, s) == CUDA_SUCCESS) {
      c->in_flight.push_back({0, 0, event, nullptr, false});
    } else {
      c->failed = true;  // cannot know when the space is free: stop using it
    }
    stats_.errors.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  c->in_flight.push_back({ticket, m, event, host + L.host_results, true});
  stats_.batches.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void CudaDevice::RetireLocked(Context& c, bool wait) {
  while (!c.in_flight.empty()) {
    Batch& b = c.in_flight.front();
    auto* event = static_cast<CUevent>(b.event);
    CUresult r = wait ? api_.cuEventSynchronize(event) : api_.cuEventQuery(event);
    if (r == CUDA_ERROR_NOT_READY) return;
    if (r == CUDA_SUCCESS && b.deliver) {
      const auto* stats = static_cast<const BufferStats*>(b.results);
      parked_.push_back({b.ticket, std::vector<BufferStats>(stats, stats + b.count)});
    } else if (r != CUDA_SUCCESS) {
      NUMTRACE_CU_CHECK(r);  // the ticket never completes: the engine times it out
    }
    c.free_events.push_back(b.event);
    c.in_flight.pop_front();
    c.device_ring.ReleaseOldest();
    c.host_ring.ReleaseOldest();
  }
}

void CudaDevice::Poll(const ResultFn& fn) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);  // cuEventQuery would break another thread's global capture
  std::vector<Parked> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : contexts_) {
      if (c->failed || c->in_flight.empty()) continue;
      ContextScope current(api_, c->handle);
      RetireLocked(*c, /*wait=*/false);
    }
    ready.swap(parked_);
  }
  // Outside the lock: the engine's callback may take its own locks, which
  // an application thread may hold while it calls Enqueue.
  for (const Parked& p : ready) fn(p.ticket, p.stats);
}

void CudaDevice::Drain() {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : contexts_) {
    if (c->failed || c->in_flight.empty()) continue;
    ContextScope current(api_, c->handle);
    RetireLocked(*c, /*wait=*/true);
  }
}

void CudaDevice::ReleaseContext(uint64_t context) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = contexts_.begin(); it != contexts_.end(); ++it) {
    Context& c = **it;
    if (c.handle != context) continue;
    {
      ContextScope current(api_, context);
      if (!c.failed) RetireLocked(c, /*wait=*/true);
      for (void* e : c.free_events) api_.cuEventDestroy_v2(static_cast<CUevent>(e));
      if (c.device_base != 0) api_.cuMemFree_v2(c.device_base);
      if (c.host_base != nullptr) api_.cuMemFreeHost(c.host_base);
    }
    contexts_.erase(it);
    return;
  }
}

}  // namespace numtrace::shim
