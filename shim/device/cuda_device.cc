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
#include <thread>

#include "shim/driver/check.h"
#include "shim/log/log.h"
#include "shim/driver/driver_api.h"
#include "shim/driver/driver_range_oracle.h"
#include "shim/driver/relaxed_capture_scope.h"
#include "shim/driver/self_call_guard.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/range_oracle.h"
#include "shim/reduce/batch_abi.h"

namespace numtrace::shim {
namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Events made when a context is prepared: enough for the batches in flight of a
// normal step; more are created (relaxed mode) only when they run out.
constexpr int kPreparedEvents = 64;

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

// Byte layout of one batch of m items and `tiles` tiles. Device:
// items | counters | partials | results. Host: items | counters (staged,
// copied in one H2D) then results (copied back in one D2H).
struct CudaDevice::BatchLayout {
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
      NoteRingBytesLocked(static_cast<int64_t>(c->ring_bytes));
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
  std::unique_ptr<Chunk> first = AllocateChunk(options_.device_memory);
  if (first == nullptr) return Prepared::kFailed;  // said why
  c.function = function;
  c.device = ContextDevice(c.handle);
  c.ring_bytes = options_.device_memory;
  c.chunks.push_back(std::move(first));
  CaptureCounters::Get().Add(Counter::kRingChunks);
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

uint64_t CudaDevice::GrowthFor(const Context& c, uint64_t need, uint64_t free, uint64_t total) const {
  // Doubling keeps the number of chunks small. The budget is read now, not
  // when the context was prepared: the job's allocator is usually far from
  // its peak then, and numtrace must not take what it will want later.
  uint64_t want = std::max<uint64_t>(c.ring_bytes, AlignUp(need, 1ull << 20) * 2);
  const uint64_t limit = std::min(options_.ring_max, (free + c.ring_bytes) / kRingShareOfGpu);
  want = std::min(want, limit > c.ring_bytes ? limit - c.ring_bytes : 0);
  const uint64_t keep = total / kKeepFreeShare;
  want = std::min(want, free > keep ? free - keep : 0);
  // Crumbs are not worth a chunk: below 16 MiB (or the batch) the ring is full.
  if (want < need || want < (16ull << 20)) return 0;
  return want / (1ull << 20) * (1ull << 20);
}

void CudaDevice::NoteRingBytesLocked(int64_t delta) {
  ring_total_ = static_cast<uint64_t>(static_cast<int64_t>(ring_total_) + delta);
  ring_peak_ = std::max(ring_peak_, ring_total_);
  CaptureCounters::Get().Set(Counter::kRingBytes, ring_peak_);
}

int CudaDevice::ContextDevice(uint64_t context) {
  ContextScope current(api_, context);
  CUdevice dev = 0;
  if (!current.ok() || api_.cuCtxGetDevice == nullptr || api_.cuCtxGetDevice(&dev) != CUDA_SUCCESS) {
    return -1;
  }
  return static_cast<int>(dev);
}

void CudaDevice::ConfirmRanges(std::span<const MeasureItem> items, int device,
                               std::vector<MeasureItem>* out) {
  out->assign(items.begin(), items.end());
  for (MeasureItem& it : *out) {
    if (it.bytes == 0) continue;
    std::optional<Allocation> a =
        ranges_ != nullptr ? ranges_->Confirm(it.address)
                           : MappedRange(api_, it.address);  // bounded by what is mapped
    bool ok = a.has_value() && a->start != 0 && a->start <= it.address &&
              it.address - a->start <= a->bytes && it.bytes <= a->bytes - (it.address - a->start);
    if (ok && a->device >= 0 && device >= 0 && a->device != device) {
      // Another GPU's memory: without peer access our read faults the context.
      CaptureCounters::Get().Add(Counter::kRangesOtherDevice);
      CaptureCounters::Get().Add(Counter::kBuffersSkipped);
      if (!warned_other_device_.exchange(true)) {
        log::Warn("buffer {:#x} ({} bytes) lives on GPU {}, the launch runs on GPU {}: not read "
                  "(footer counter ranges_other_device counts every such buffer)",
                  it.address, it.bytes, a->device, device);
      }
      it.bytes = 0;
      continue;
    }
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

bool CudaDevice::Enqueue(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket) {
  SelfCallGuard guard;
  // Every refusal is counted here, once, as why (the footer's counters).
  const auto refuse = [](Counter why) {
    CaptureCounters::Get().Add(why);
    return false;
  };
  auto* s = reinterpret_cast<CUstream>(stream);
  // No capture query here: the engine never asks for a measurement on a
  // capturing stream (LaunchEvent::stream_capturing, asked once per launch
  // by the switchboard) - one path for that bit.
  const uint32_t m = static_cast<uint32_t>(items.size());
  RelaxedCaptureScope relaxed(api_);
  Context* c = ReadyContext(StreamContext(s));
  if (c == nullptr) return refuse(Counter::kDeviceUnprepared);
  // Range checks are driver queries: made before taking the mutex.
  thread_local std::vector<MeasureItem> confirmed;
  ConfirmRanges(items, c->device, &confirmed);
  items = confirmed;

  uint64_t tiles = 0;
  for (const MeasureItem& it : items) tiles += TileCount(it.bytes, it.dtype);
  if (tiles > 0x7fffffffull) return refuse(Counter::kRingFull);
  const BatchLayout layout(m, tiles);
  // Under the mutex only the reservation: ring space, an event from the
  // pool and the batch's place in the FIFO. The copies, the launch and the
  // event record block while the stream's launch queue is full; made under
  // the mutex they would stall every other thread's launches and Poll
  // behind this stream (review round 4, finding 11).
  Reservation r = ReserveBatch(*c, ticket, m, layout);
  if (r.batch == nullptr) return refuse(r.refused);

  // The pool ran dry: a new event (the driver may allocate).
  const bool created =
      r.event != nullptr || NUMTRACE_CU_CHECK(api_.cuEventCreate(reinterpret_cast<CUevent*>(&r.event),
                                                                  CU_EVENT_DISABLE_TIMING));
  bool recorded = false;
  const bool queued = created && QueueBatch(s, items, tiles, layout, r, &recorded);

  std::lock_guard<std::mutex> lock(mu_);
  if (c->generation != r.generation) {
    // The context was released meanwhile (the application destroyed it while
    // launching in it): the batch is gone with it, and so is the event.
    return refuse(Counter::kDeviceErrors);
  }
  r.batch->queued = true;
  r.batch->deliver = queued;
  // No event: nothing was queued (creation failed) and the space comes back
  // in FIFO order; or the stream may still read it and nobody can tell
  // when, so the context is no longer used.
  r.batch->event = recorded ? r.event : nullptr;
  if (created && !recorded) c->state = State::kFailed;
  return queued || refuse(Counter::kDeviceErrors);
}

CudaDevice::Reservation CudaDevice::ReserveBatch(Context& c, uint64_t ticket, uint32_t count,
                                                 const BatchLayout& layout) {
  std::lock_guard<std::mutex> lock(mu_);
  if (c.state != State::kReady) return {.refused = Counter::kDeviceUnprepared};  // released since ReadyContext
  std::optional<uint64_t> host_off, dev_off;
  uint32_t chunk = 0;
  RetireLocked(c);  // recycle space before refusing
  // The oldest chunk first: under a lighter load the grown ones empty and
  // Poll can give them back.
  for (size_t i = 0; i < c.chunks.size() && !dev_off; ++i) {
    Chunk& k = *c.chunks[i];
    host_off = k.host_ring.Allocate(layout.host_bytes);
    if (!host_off) continue;
    dev_off = k.device_ring.Allocate(layout.device_bytes);
    if (!dev_off) {
      k.host_ring.ReleaseNewest();  // keep the two rings in step
      host_off.reset();
      continue;
    }
    chunk = static_cast<uint32_t>(i);
  }
  if (!dev_off) {
    // No allocation here (it may synchronise the application's thread):
    // Poll, on the engine's thread, grows the ring for the next batches.
    c.wanted = std::max(c.wanted, layout.device_bytes);
    if (!warned_full_.exchange(true)) {
      log::Warn("the reduction ring of context {:#x} is full at {} MiB; launches are dropped whole "
                "until it has grown or drained (footer dropped, counter ring_full)",
                c.handle, c.ring_bytes >> 20);
    }
    return {.refused = Counter::kRingFull};
  }
  c.largest = std::max(c.largest, layout.device_bytes);  // what growing ahead of need must fit
  Reservation r;
  if (!c.free_events.empty()) {
    r.event = c.free_events.back();
    c.free_events.pop_back();
  }
  const Chunk& k = *c.chunks[chunk];
  r.host = k.host_base + *host_off;
  r.device = k.device_base + *dev_off;
  r.function = c.function;
  // Not queued yet: RetireLocked stops at it, ReleaseContext frees nothing.
  c.in_flight.push_back({ticket, count, chunk, layout.device_bytes, nullptr, r.host + layout.host_results,
                         /*deliver=*/false, /*queued=*/false});
  r.batch = &c.in_flight.back();  // a deque keeps it in place while others come and go
  r.generation = c.generation;
  c.in_use += layout.device_bytes;
  return r;
}

bool CudaDevice::QueueBatch(void* stream, std::span<const MeasureItem> items, uint64_t tiles,
                            const BatchLayout& layout, const Reservation& r, bool* recorded) {
  auto* s = static_cast<CUstream>(stream);
  auto* event = static_cast<CUevent>(r.event);
  uint8_t* host = r.host;
  const CUdeviceptr dev = r.device;
  const uint32_t m = static_cast<uint32_t>(items.size());
  auto* staged = reinterpret_cast<NtBatchItem*>(host);
  for (uint32_t i = 0; i < m; ++i) {
    staged[i] = NtBatchItem{items[i].address, items[i].bytes, 0, 0, static_cast<uint32_t>(items[i].dtype), i, 0};
  }
  NtPlanBatch(staged, m);
  std::memset(host + layout.counters, 0, uint64_t{m} * 4);
  CUdeviceptr items_dev = dev + layout.items, counters_dev = dev + layout.counters;
  CUdeviceptr partials_dev = dev + layout.partials, results_dev = dev + layout.results;
  void* params[] = {&items_dev, const_cast<uint32_t*>(&m), &partials_dev, &counters_dev, &results_dev};
  bool ok = m == 0 ||
            (NUMTRACE_CU_CHECK(api_.cuMemcpyHtoDAsync_v2(dev, host, layout.staged_bytes, s)) &&
             NUMTRACE_CU_CHECK(api_.cuLaunchKernel(static_cast<CUfunction>(r.function), static_cast<unsigned>(tiles),
                                                   1, 1, kNtBlockThreads, 1, 1, 0, s, params, nullptr)) &&
             NUMTRACE_CU_CHECK(api_.cuMemcpyDtoHAsync_v2(host + layout.host_results, results_dev,
                                                         uint64_t{m} * sizeof(BufferStats), s)));
  ok = ok && NUMTRACE_CU_CHECK(api_.cuEventRecord(event, s));
  // After a failure, work may already be queued on the stream that reads
  // this space: it stays taken until an event recorded now completes.
  *recorded = ok || api_.cuEventRecord(event, s) == CUDA_SUCCESS;
  return ok;
}

void CudaDevice::RetireLocked(Context& c) {
  while (!c.in_flight.empty()) {
    Batch& b = c.in_flight.front();
    // Still being queued by Enqueue outside the mutex: its space is taken,
    // and the later batches wait behind it (FIFO per chunk).
    if (!b.queued) return;
    auto* event = static_cast<CUevent>(b.event);
    // No event: nothing of it was queued.
    CUresult r = event != nullptr ? api_.cuEventQuery(event) : CUDA_SUCCESS;
    if (r == CUDA_ERROR_NOT_READY) return;
    if (r == CUDA_SUCCESS && b.deliver) {
      const auto* stats = static_cast<const BufferStats*>(b.results);
      parked_.push_back({b.ticket, std::vector<BufferStats>(stats, stats + b.count), false});
    } else if (r != CUDA_SUCCESS) {
      NUMTRACE_CU_CHECK(r);
      // Its results are unknown: handed out as failed, so the engine writes
      // the launch as dropped instead of holding every later record for it.
      if (b.deliver) parked_.push_back({b.ticket, {}, true});
    }
    // Batches of one chunk are allocated and retired in the same order, so
    // each chunk's ring stays FIFO.
    Chunk& k = *c.chunks[b.chunk];
    k.device_ring.ReleaseOldest();
    k.host_ring.ReleaseOldest();
    c.in_use -= b.device_bytes;
    if (b.event != nullptr) c.free_events.push_back(b.event);
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
      RetireLocked(*c);
    }
    ready.swap(parked_);
  }
  ResizeRings();
  // Outside the lock: the engine's callback may take its own locks, which
  // an application thread may hold while it calls Enqueue.
  for (const Parked& p : ready) fn(p.ticket, p.stats, p.failed);
}

void CudaDevice::ResizeRings() {
  struct Job {
    Context* c;
    uint32_t generation;             // ReleaseContext since: the chunk is not the context's
    uint64_t need;                   // > 0: grow for a batch this big
    bool asked;                      // a batch was refused (else: ahead of need)
    std::unique_ptr<Chunk> release;  // else: free this idle chunk
  };
  std::vector<Job> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& p : contexts_) {
      Context& c = *p;
      if (c.state != State::kReady || c.growing) continue;
      const bool asked = c.wanted > 0;
      // Ahead of need only while the ring could still grow by a chunk.
      const bool ahead = c.in_use > c.ring_bytes / 2 && c.ring_bytes + (16ull << 20) <= options_.ring_max;
      if (asked || ahead) {
        c.idle_polls = 0;
        c.growing = true;
        jobs.push_back({&c, c.generation, std::max(c.wanted, c.largest), asked, nullptr});
        c.wanted = 0;
        continue;
      }
      // Only the newest chunk is ever freed: batches name chunks by index.
      if (c.chunks.size() < 2 || !c.chunks.back()->device_ring.empty() ||
          c.in_use > (c.ring_bytes - c.chunks.back()->device_ring.size()) / 4) {
        c.idle_polls = 0;
        continue;
      }
      if (++c.idle_polls < kIdlePollsBeforeRelease) continue;
      c.idle_polls = 0;
      std::unique_ptr<Chunk> idle = std::move(c.chunks.back());
      c.chunks.pop_back();
      c.ring_bytes -= idle->device_ring.size();
      NoteRingBytesLocked(-static_cast<int64_t>(idle->device_ring.size()));
      c.growing = true;  // its handle stays busy until the chunk is freed
      jobs.push_back({&c, c.generation, 0, false, std::move(idle)});
    }
  }
  for (Job& j : jobs) {
    ContextScope in_context(api_, j.c->handle);
    if (j.release != nullptr) {
      if (in_context.ok()) {
        api_.cuMemFree_v2(j.release->device_base);
        api_.cuMemFreeHost(j.release->host_base);
      }
      CaptureCounters::Get().Add(Counter::kRingChunksFreed);
      std::lock_guard<std::mutex> lock(mu_);
      j.c->growing = false;
      continue;
    }
    uint64_t grow = 0;
    size_t free = 0, total = 0;
    // Unknown free memory: the first chunk only.
    if (in_context.ok() && api_.cuMemGetInfo_v2 != nullptr &&
        api_.cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS) {
      std::lock_guard<std::mutex> lock(mu_);
      grow = GrowthFor(*j.c, j.need, free, total);
    }
    std::unique_ptr<Chunk> added;
    if (grow == 0 && j.asked) {
      CaptureCounters::Get().Add(Counter::kRingGrowthRefused);
      if (!warned_budget_.exchange(true)) {
        log::Warn("the reduction ring of context {:#x} stays at {} MiB: growing it would pass "
                  "NUMTRACE_RING_MAX ({} MiB) or 1/{} of the GPU, or leave under 1/{} of its memory "
                  "free ({} of {} MiB free); what does not fit is dropped (counters "
                  "ring_growth_refused, ring_full)",
                  j.c->handle, j.c->ring_bytes >> 20, options_.ring_max >> 20, kRingShareOfGpu,
                  kKeepFreeShare, free >> 20, total >> 20);
      }
    } else if (grow != 0) {
      added = AllocateChunk(grow);  // said why when it fails
    }
    std::unique_lock<std::mutex> lock(mu_);
    j.c->growing = false;
    if (added == nullptr) continue;
    if (j.c->generation != j.generation || j.c->state != State::kReady) {
      lock.unlock();  // released meanwhile: the chunk was never the ring's
      api_.cuMemFree_v2(added->device_base);
      api_.cuMemFreeHost(added->host_base);
      continue;
    }
    j.c->chunks.push_back(std::move(added));
    j.c->ring_bytes += grow;
    NoteRingBytesLocked(static_cast<int64_t>(grow));
    CaptureCounters::Get().Add(Counter::kRingChunks);
  }
}

bool CudaDevice::WaitForEvents(const std::vector<std::pair<uint64_t, void*>>& waits,
                               std::chrono::steady_clock::time_point deadline) {
  size_t left = 0;
  for (size_t i = 0; i < waits.size(); ++i) {
    ContextScope current(api_, waits[i].first);
    auto* event = static_cast<CUevent>(waits[i].second);
    // An error ends the wait too: RetireLocked says it and frees the space.
    while (api_.cuEventQuery(event) == CUDA_ERROR_NOT_READY) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (api_.cuEventQuery(event) == CUDA_ERROR_NOT_READY) {
      left = waits.size() - i;  // the later ones are not waited for either
      break;
    }
  }
  if (left == 0) return true;
  CaptureCounters::Get().Add(Counter::kExitWaitExpired);
  if (!warned_wait_.exchange(true)) {
    log::Warn("gave up waiting for the GPU after {} s (NUMTRACE_EXIT_WAIT): {} measurement batches "
              "had not finished (a stream that never drains, e.g. an NCCL peer that died); their "
              "launches are written as dropped (counter exit_wait_expired)",
              options_.exit_wait.count() / 1000.0, left);
  }
  return false;
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
      for (const Batch& b : c->in_flight) {
        if (b.queued && b.event != nullptr) waits.emplace_back(c->handle, b.event);
      }
    }
  }
  WaitForEvents(waits, std::chrono::steady_clock::now() + options_.exit_wait);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : contexts_) {
    if (c->state != State::kReady || c->in_flight.empty()) continue;
    ContextScope current(api_, c->handle);
    RetireLocked(*c);
  }
}

void CudaDevice::ResetLocked(Context& c) {
  // The entry stays (a launch thread may still hold it between its lookup
  // and the mutex), emptied: a new context reusing the handle is prepared
  // afresh.
  c.chunks.clear();
  c.free_events.clear();
  c.in_flight.clear();
  c.function = nullptr;
  NoteRingBytesLocked(-static_cast<int64_t>(c.ring_bytes));
  c.ring_bytes = c.in_use = c.wanted = c.largest = 0;
  c.idle_polls = 0;
  ++c.generation;
  c.state = State::kNew;
}

void CudaDevice::ReleaseContext(uint64_t context) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);
  std::vector<std::pair<uint64_t, void*>> waits;
  Context* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& p : contexts_) {
      if (p->handle == context) c = p.get();
    }
    // Being prepared by a launch on another thread: that thread owns it.
    if (c == nullptr || c->state == State::kPreparing) return;
    if (c->state == State::kReady) {
      for (const Batch& b : c->in_flight) {
        if (b.queued && b.event != nullptr) waits.emplace_back(context, b.event);
      }
    }
  }
  // Waited for without the mutex: other threads' launches and the writer's
  // Poll go on meanwhile.
  const bool finished = WaitForEvents(waits, std::chrono::steady_clock::now() + options_.exit_wait);
  std::vector<std::unique_ptr<Chunk>> chunks;
  std::vector<void*> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (c->state == State::kReady) {
      ContextScope current(api_, context);
      RetireLocked(*c);
    }
    if (c->state != State::kPreparing) {
      // A batch another thread is still queueing (a context destroyed while
      // the application launches in it) may yet be read: nothing is freed.
      const bool queueing = std::any_of(c->in_flight.begin(), c->in_flight.end(),
                                        [](const Batch& b) { return !b.queued; });
      if (finished && !queueing) {
        chunks = std::move(c->chunks);
        events = std::move(c->free_events);
      }
      ResetLocked(*c);
    }
  }
  if (chunks.empty() && events.empty()) return;
  // Outside the mutex: cuMemFree may wait for the device.
  ContextScope current(api_, context);
  for (void* e : events) api_.cuEventDestroy_v2(static_cast<CUevent>(e));
  for (auto& k : chunks) {
    if (k->device_base != 0) api_.cuMemFree_v2(k->device_base);
    if (k->host_base != nullptr) api_.cuMemFreeHost(k->host_base);
  }
}

void CudaDevice::ForgetContext(uint64_t context) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : contexts_) {
    if (p->handle == context && p->state != State::kPreparing) ResetLocked(*p);
  }
}

}  // namespace numtrace::shim
