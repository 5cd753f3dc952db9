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
    failed_ = !pushed_;
  }
  // False when the context could not be made current.
  bool ok() const { return !failed_; }
  ~ContextScope() {
    if (!pushed_) return;
    CUcontext popped = nullptr;
    api_.cuCtxPopCurrent_v2(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const DriverApi& api_;
  bool pushed_ = false, failed_ = false;
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

std::string GpuUuidText(const unsigned char bytes[16]) {
  std::string out = "GPU-";
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

std::optional<DeviceInfo> QueryDeviceInfo(const DriverApi& api, uint64_t context, EnvironmentValues* env) {
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
    if (env != nullptr) {
      SetEnvironmentValue(env, "gpu.name", info.name);
      CUuuid uuid{};
      if (api.cuDeviceGetUuid_v2(&uuid, dev) == CUDA_SUCCESS) {
        SetEnvironmentValue(env, "gpu.uuid", GpuUuidText(reinterpret_cast<const unsigned char*>(uuid.bytes)));
      }
      int sms = 0;
      if (api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS) {
        SetEnvironmentValue(env, "gpu.sm_count", std::to_string(sms));
      }
      SetEnvironmentValue(env, "gpu.cc", info.cc);
      if (!info.driver.empty()) SetEnvironmentValue(env, "driver.version", info.driver);
    }
  }
  if (pushed) {
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent_v2(&popped);
  }
  if (!ok) return std::nullopt;
  return info;
}

CudaDevice::CudaDevice(const DriverApi& api, std::span<const uint8_t> fatbin, Options options)
    : api_(api), fatbin_(fatbin), options_(options) {}

bool CudaDevice::LoadKernel() {
  if (kernel_.load(std::memory_order_acquire) != nullptr) return true;
  if (kernel_failed_.load(std::memory_order_acquire)) return false;
  // Another thread loading right now: this preparation waits for nothing
  // (the caller refuses the launch and a later one tries again).
  std::unique_lock<std::mutex> lock(load_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (kernel_.load(std::memory_order_acquire) != nullptr) return true;
  CUlibrary lib = nullptr;
  CUkernel kernel = nullptr;
  // Context-independent loading: one CUlibrary serves every context.
  if (!NUMTRACE_CU_CHECK(api_.cuLibraryLoadData(&lib, fatbin_.data(), nullptr, nullptr, 0, nullptr,
                                                nullptr, 0)) ||
      !NUMTRACE_CU_CHECK(api_.cuLibraryGetKernel(&kernel, lib, kReduceBatchKernelName))) {
    kernel_failed_.store(true, std::memory_order_release);
    log::Warn("cannot load the reduction kernels for this GPU; kernels are listed without stats");
    return false;
  }
  library_ = lib;
  kernel_.store(kernel, std::memory_order_release);
  return true;
}

uint64_t CudaDevice::StreamContext(void* stream) {
  CUcontext ctx = nullptr;
  // cuStreamGetCtx answers for the legacy and per-thread handles too (the
  // calling thread's context); fall back to the current context on error.
  if (api_.cuStreamGetCtx(static_cast<CUstream>(stream), &ctx) != CUDA_SUCCESS || ctx == nullptr) {
    if (api_.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr) return 0;
  }
  return reinterpret_cast<uint64_t>(ctx);
}

CudaDevice::Context* CudaDevice::ReadyContext(uint64_t handle) {
  if (handle == 0) return nullptr;
  Context* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& p : contexts_) {
      if (p->handle == handle) c = p.get();
    }
    if (c == nullptr) {
      contexts_.push_back(std::make_unique<Context>());
      c = contexts_.back().get();
      c->handle = handle;
    }
    if (c->state == State::kReady) return c;
    if (c->state != State::kNew) return nullptr;  // failed, or another thread prepares it
    c->state = State::kPreparing;  // this thread owns it until the state changes
  }
  Prepared r = Prepare(*c);
  std::lock_guard<std::mutex> lock(mu_);
  switch (r) {
    case Prepared::kReady:
      c->state = State::kReady;
      CaptureCounters::Get().Add(Counter::kContextsPrepared);
      return c;
    case Prepared::kBusy:
      c->state = State::kNew;  // a later launch tries again
      return nullptr;
    case Prepared::kFailed:
      break;
  }
  c->state = State::kFailed;
  CaptureCounters::Get().Add(Counter::kContextsFailed);
  return nullptr;
}

bool CudaDevice::PrepareContext(uint64_t context) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);
  if (context == 0) {
    CUcontext current = nullptr;
    if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == nullptr) return false;
    context = reinterpret_cast<uint64_t>(current);
  }
  return ReadyContext(context) != nullptr;
}

CudaDevice::Prepared CudaDevice::Prepare(Context& c) {
  ContextScope in_context(api_, c.handle);
  if (!in_context.ok()) {
    log::Warn("cannot make CUDA context {:#x} current; not measuring in it yet", c.handle);
    return Prepared::kBusy;  // not remembered as failed: a later launch may try again
  }
  if (!LoadKernel()) return kernel_failed_.load() ? Prepared::kFailed : Prepared::kBusy;
  CUfunction function = nullptr;
  // Loads the library into this context now, not lazily at our first
  // launch (which may sit inside the application's stream capture).
  if (!NUMTRACE_CU_CHECK(api_.cuKernelGetFunction(
          &function, reinterpret_cast<CUkernel>(kernel_.load(std::memory_order_acquire))))) {
    log::Warn("cannot load the reduction kernel into CUDA context {:#x}; not measuring in it",
              c.handle);
    return Prepared::kFailed;
  }
  size_t free = 0, total = 0;
  if (api_.cuMemGetInfo_v2 != nullptr && api_.cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS) {
    c.budget = std::min<uint64_t>(free / 8, kMaxRingBytes);  // unknown: the first chunk only
  }
  std::unique_ptr<Chunk> first = AllocateChunk(options_.device_memory);
  if (first == nullptr) return Prepared::kFailed;  // said why
  c.function = function;
  c.ring_bytes = options_.device_memory;
  c.chunks.push_back(std::move(first));
  CaptureCounters::Get().Add(Counter::kRingChunks);
  CaptureCounters::Get().Add(Counter::kRingBytes, options_.device_memory);
  for (int i = 0; i < kPreparedEvents; ++i) {
    CUevent e = nullptr;
    if (api_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) break;
    c.free_events.push_back(e);
  }
  return Prepared::kReady;
}

std::unique_ptr<CudaDevice::Chunk> CudaDevice::AllocateChunk(uint64_t device_bytes) {
  const uint64_t host_bytes = options_.host_memory != 0
                                  ? options_.host_memory
                                  : std::max<uint64_t>(device_bytes / 16, 1ull << 20);
  CUdeviceptr base = 0;
  void* host = nullptr;
  if (!NUMTRACE_CU_CHECK(api_.cuMemAlloc_v2(&base, device_bytes))) {
    log::Warn("cannot allocate {} MiB of device memory for the reductions (NUMTRACE_DEVICE_MEMORY); "
              "not measuring what does not fit", device_bytes >> 20);
    return nullptr;
  }
  if (!NUMTRACE_CU_CHECK(api_.cuMemHostAlloc(&host, host_bytes, CU_MEMHOSTALLOC_PORTABLE))) {
    api_.cuMemFree_v2(base);
    log::Warn("cannot allocate {} MiB of pinned host memory; not measuring what does not fit",
              host_bytes >> 20);
    return nullptr;
  }
  auto chunk = std::make_unique<Chunk>();
  chunk->device_base = base;
  chunk->host_base = static_cast<uint8_t*>(host);
  chunk->device_ring = ByteRing(device_bytes);
  chunk->host_ring = ByteRing(host_bytes);
  return chunk;
}

uint64_t CudaDevice::GrowthFor(const Context& c, uint64_t need) {
  // Doubling keeps the number of chunks small; the budget (an eighth of the
  // memory free when the context was prepared) keeps numtrace from taking
  // what the job's allocator will want later.
  uint64_t want = std::max<uint64_t>(c.ring_bytes, AlignUp(need, 1ull << 20) * 2);
  const uint64_t room = c.budget > c.ring_bytes ? c.budget - c.ring_bytes : 0;
  want = std::min(want, room);
  // Crumbs are not worth a chunk: below 16 MiB (or the batch) the ring is full.
  if (want < need || want < (16ull << 20)) return 0;
  return AlignUp(want, 1ull << 20);
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
  const uint32_t m = static_cast<uint32_t>(items.size());
  RelaxedCaptureScope relaxed(api_);
  Context* c = ReadyContext(StreamContext(s));
  if (c == nullptr) {
    stats_.unprepared.fetch_add(1, std::memory_order_relaxed);
    CaptureCounters::Get().Add(Counter::kDeviceUnprepared);
    return false;
  }
  // Range checks are driver queries: made before taking the mutex.
  thread_local std::vector<MeasureItem> confirmed;
  ConfirmRanges(items, &confirmed);
  items = confirmed;

  uint64_t tiles = 0;
  for (const MeasureItem& it : items) tiles += TileCount(it.bytes, it.dtype);
  if (tiles > 0x7fffffffull) {
    stats_.full.fetch_add(1, std::memory_order_relaxed);
    CaptureCounters::Get().Add(Counter::kRingFull);
    return false;
  }
  const BatchLayout L(m, tiles);

  std::unique_lock<std::mutex> lock(mu_);
  std::optional<uint64_t> host_off, dev_off;
  uint32_t chunk = 0;
  for (int attempt = 0;; ++attempt) {
    RetireLocked(*c, /*wait=*/false);  // recycle space before asking for more
    // The newest chunk first: older ones drain as their batches complete.
    for (size_t i = c->chunks.size(); i-- > 0 && !dev_off;) {
      Chunk& k = *c->chunks[i];
      host_off = k.host_ring.Allocate(L.host_bytes);
      if (!host_off) continue;
      dev_off = k.device_ring.Allocate(L.device_bytes);
      if (!dev_off) {
        k.host_ring.ReleaseNewest();  // keep the two rings in step
        host_off.reset();
        continue;
      }
      chunk = static_cast<uint32_t>(i);
    }
    if (dev_off) break;
    const uint64_t grow = attempt == 0 && !c->growing ? GrowthFor(*c, L.device_bytes) : 0;
    if (grow == 0) {
      stats_.full.fetch_add(1, std::memory_order_relaxed);
      CaptureCounters::Get().Add(Counter::kRingFull);
      if (!warned_full_.exchange(true)) {
        log::Warn("the reduction ring of context {:#x} is full at {} MiB and cannot grow (GPU free "
                  "memory); launches are dropped whole (footer dropped, counter ring_full)",
                  c->handle, c->ring_bytes >> 20);
      }
      return false;
    }
    // Allocated outside the mutex: other launches go on meanwhile.
    c->growing = true;
    lock.unlock();
    std::unique_ptr<Chunk> added = AllocateChunk(grow);
    lock.lock();
    c->growing = false;
    if (added == nullptr) continue;  // said why; the next attempt refuses
    c->chunks.push_back(std::move(added));
    c->ring_bytes += grow;
    stats_.grown.fetch_add(1, std::memory_order_relaxed);
    CaptureCounters::Get().Add(Counter::kRingChunks);
    CaptureCounters::Get().Add(Counter::kRingBytes, grow);
  }
  Chunk& k = *c->chunks[chunk];
  void* acquired = nullptr;
  if (!AcquireEventLocked(*c, &acquired)) {
    // Nothing was queued yet: give the space back instead of losing the context.
    k.device_ring.ReleaseNewest();
    k.host_ring.ReleaseNewest();
    stats_.errors.fetch_add(1, std::memory_order_relaxed);
    CaptureCounters::Get().Add(Counter::kDeviceErrors);
    return false;
  }
  auto* event = static_cast<CUevent>(acquired);
  uint8_t* host = k.host_base + *host_off;
  auto* staged = reinterpret_cast<NtBatchItem*>(host);
  for (uint32_t i = 0; i < m; ++i) {
    staged[i] = NtBatchItem{items[i].address, items[i].bytes, 0, 0,
                            static_cast<uint32_t>(items[i].dtype), i, 0};
  }
  NtPlanBatch(staged, m);
  std::memset(host + L.counters, 0, uint64_t{m} * 4);

  CUdeviceptr dev = k.device_base + *dev_off;
  CUdeviceptr items_dev = dev + L.items, counters_dev = dev + L.counters;
  CUdeviceptr partials_dev = dev + L.partials, results_dev = dev + L.results;
  void* params[] = {&items_dev, const_cast<uint32_t*>(&m), &partials_dev, &counters_dev, &results_dev};
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
      c->in_flight.push_back({0, 0, chunk, event, nullptr, false});
    } else {
      c->state = State::kFailed;  // cannot know when the space is free: stop using it
    }
    stats_.errors.fetch_add(1, std::memory_order_relaxed);
    CaptureCounters::Get().Add(Counter::kDeviceErrors);
    return false;
  }
  c->in_flight.push_back({ticket, m, chunk, event, host + L.host_results, true});
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
    // Batches of one chunk are allocated and retired in the same order, so
    // each chunk's ring stays FIFO.
    Chunk& k = *c.chunks[b.chunk];
    k.device_ring.ReleaseOldest();
    k.host_ring.ReleaseOldest();
    c.free_events.push_back(b.event);
    c.in_flight.pop_front();
  }
}

void CudaDevice::Poll(const ResultFn& fn) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);  // cuEventQuery would break another thread's global capture
  std::vector<Parked> ready;
  {
    // Event queries do not block: the mutex is held for bookkeeping only.
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : contexts_) {
      if (c->state != State::kReady || c->in_flight.empty()) continue;
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
  // Wait for every batch in flight WITHOUT the mutex (batches on several
  // streams complete in any order): an application thread in a launch
  // callback must never wait behind a blocking driver call of ours. An
  // event recycled meanwhile only makes its wait end later.
  std::vector<std::pair<uint64_t, void*>> waits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : contexts_) {
      if (c->state != State::kReady) continue;
      for (const Batch& b : c->in_flight) waits.emplace_back(c->handle, b.event);
    }
  }
  for (auto& [context, event] : waits) {
    ContextScope current(api_, context);
    NUMTRACE_CU_CHECK(api_.cuEventSynchronize(static_cast<CUevent>(event)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : contexts_) {
    if (c->state != State::kReady || c->in_flight.empty()) continue;
    ContextScope current(api_, c->handle);
    RetireLocked(*c, /*wait=*/false);
  }
}

void CudaDevice::FreeChunks(Context& c) {
  for (auto& k : c.chunks) {
    if (k->device_base != 0) api_.cuMemFree_v2(k->device_base);
    if (k->host_base != nullptr) api_.cuMemFreeHost(k->host_base);
  }
  c.chunks.clear();
}

void CudaDevice::ReleaseContext(uint64_t context) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : contexts_) {
    Context& c = *p;
    if (c.handle != context) continue;
    // Being prepared by a launch on another thread: that thread owns it.
    if (c.state == State::kPreparing) return;
    {
      ContextScope current(api_, context);
      if (c.state == State::kReady) RetireLocked(c, /*wait=*/true);
      for (void* e : c.free_events) api_.cuEventDestroy_v2(static_cast<CUevent>(e));
      FreeChunks(c);
    }
    // The entry stays (a launch thread may still hold it between its lookup
    // and the mutex), emptied: a new context reusing the handle is prepared
    // afresh.
    c.free_events.clear();
    c.in_flight.clear();
    c.function = nullptr;
    c.ring_bytes = 0;
    c.budget = 0;
    c.state = State::kNew;
    return;
  }
}

}  // namespace numtrace::shim
