// File: shim/device/cuda_device.h
//
// The Device that runs the reductions on the GPU: the batched reduction
// kernel of shim/reduce (batch_abi.h) is loaded once from the embedded
// fatbin with cuLibraryLoadData and launched on the intercepted launch's own
// stream, so stream order alone puts the measurement after (or, at ENTER,
// before) the kernel: no host synchronisation per launch.
//
// Memory: per CUDA context, a device ring holds each batch's items,
// counters, tile partials and results, and a pinned host ring the staged
// items and the copied-back results. A measurement needs about 96 bytes of
// device scratch per 4,096 elements, and PyTorch's host thread runs
// hundreds of launches ahead of the GPU, so a fixed ring drops most of a
// model-size step. The ring is a list of chunks: the first of
// config.device_memory (64 MiB), allocated when the context is prepared.
// Growth never happens on the application's launch path (cuMemAlloc and
// cuMemHostAlloc may synchronise): a batch that does not fit is refused
// and asks for a chunk, and Poll - on the engine's writer thread - adds it
// (doubling the ring, at least twice the batch), and does so ahead of
// need once the batches in flight fill more than half of the ring. Before
// each growth Poll reads the GPU's free memory again (cuMemGetInfo): the
// ring stays under options.ring_max (NUMTRACE_RING_MAX, 2 GiB) and under
// a 32nd of what the GPU has (free plus the ring), and never takes the
// free memory below a tenth of the total; a growth refused for that is
// counted (ring_growth_refused) and said once. A refused batch drops its
// launch whole with a note (footer `dropped`, counter ring_full). Space is
// reused as batches complete (FIFO per chunk, the oldest chunk first); a
// grown chunk that stayed empty for kIdlePollsBeforeRelease polls while
// the rest of the ring was at most a quarter full is freed, again from
// Poll (counters ring_chunks, ring_chunks_freed; ring_bytes is the most
// the rings of all contexts held at once).
//
// A context is prepared lazily - kernel loaded, first chunk and a pool of
// events allocated - at the first Enqueue in it, outside the mutex other
// launches need (a second launch in the same context meanwhile is refused,
// never made to wait), in relaxed capture mode, never inside CUPTI's
// context-creation callback, where allocating is known to deadlock other
// tools. A context whose preparation failed (a GPU the allocator filled)
// gets no measurement: one line, footer counter contexts_failed, capture
// goes on elsewhere.
// The launch's context is its stream's (cuStreamGetCtx), not the thread's
// current one; the thread's is used only when the driver cannot say.
//
// Buffers: every item's range is confirmed with the driver
// (cuPointerGetAttributes: range start, size, mapped) before a reduction
// reads it. An item the driver does not confirm wholly (freed memory, a
// missed free, a host pointer) is measured over zero bytes instead - never
// read - and counted (footer ranges_unconfirmed, buffers_skipped).
// Batches are recycled in FIFO order as they complete (an event per batch);
// a batch that does not fit returns false: the engine counts a drop.
//
// Capture: the caller never enqueues on a stream that is being captured
// into a CUDA graph (the engine refuses such launches from
// LaunchEvent::stream_capturing, which the switchboard asked once per
// launch); Enqueue does not ask again. Every driver call of ours runs in
// relaxed capture mode (relaxed_capture_scope.h), so a global-mode capture
// on another stream or thread is never invalidated by our queries, copies
// and event polls.
//
// Every driver call goes through DriverApi (never linked) inside a
// SelfCallGuard, so numtrace's own launches and copies are invisible to its
// callbacks.
//
// Example:
//   auto dev = std::make_unique<CudaDevice>(DriverApi::Instance(), ReductionFatbin(),
//                                           CudaDevice::Options{.device_memory = 64 << 20});
//   dev->SetRangeOracle(&step_ranges);     // optional: the engine's per-step cache
//   dev->Enqueue(stream, items, ticket);   // from the launch callback; the
//                                          // stream's context is prepared first
//   dev->Poll(on_result);                  // from the engine's thread
#ifndef NUMTRACE_SHIM_DEVICE_CUDA_DEVICE_H_
#define NUMTRACE_SHIM_DEVICE_CUDA_DEVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/format/records.h"
#include "shim/device/cuda_dump_copier.h"
#include "common/settings/config.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/device.h"

namespace numtrace::shim {

struct DriverApi;
class RangeOracle;

// FIFO byte ring: allocations are released in the order they were made.
// Exposed for CPU tests; CudaDevice uses one per memory kind.
class ByteRing {
 public:
  explicit ByteRing(uint64_t size = 0) : size_(size) {}
  // Offset of `bytes` (rounded up to `align`) contiguous bytes, or nullopt when full.
  std::optional<uint64_t> Allocate(uint64_t bytes, uint64_t align = 256);
  // Releases the oldest allocation (normal retirement).
  void ReleaseOldest();
  // Releases the newest allocation (undo of an Allocate just made).
  void ReleaseNewest();
  uint64_t size() const { return size_; }
  bool empty() const { return live_.empty(); }

 private:
  struct Span {
    uint64_t offset, bytes;
  };
  uint64_t size_;
  std::deque<Span> live_;
};

// The driver version in a /proc/driver/nvidia/version first line (the
// proprietary and the open kernel modules word it differently); "" if none.
std::string ParseNvidiaDriverVersion(std::string_view line);

// Fills a DeviceInfo for `context`'s device (name, compute capability,
// CUDA version; driver version from /proc/driver/nvidia/version), and when
// `env` is given the environment's gpu.* and driver.version keys
// (common/format/environment.h): name, UUID, SM count, compute capability.
std::optional<DeviceInfo> QueryDeviceInfo(const DriverApi& api, uint64_t context,
                                          EnvironmentValues* env = nullptr);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi spells a UUID.
std::string GpuUuidText(const unsigned char bytes[16]);

class CudaDevice : public Device {
 public:
  struct Options {
    uint64_t device_memory = 64ull << 20;  // per context, first chunk of the ring
    uint64_t host_memory = 0;              // pinned, per chunk; 0: device chunk / 16, >= 1 MiB
    uint64_t ring_max = settings::kDefaultRingMax;   // per context, all chunks (NUMTRACE_RING_MAX, config.h)
    // The most Drain and ReleaseContext wait for the GPU (NUMTRACE_EXIT_WAIT).
    std::chrono::milliseconds exit_wait{10'000};
  };
  // The ring takes at most this share of the GPU's memory (free + ring) ...
  static constexpr uint64_t kRingShareOfGpu = 32;
  // ... and leaves at least this share of the total free.
  static constexpr uint64_t kKeepFreeShare = 10;
  // A grown chunk is freed after this many Polls empty (about 5 s at the
  // writer's 10 ms period): a later burst would otherwise pay its
  // allocation again at once.
  static constexpr uint32_t kIdlePollsBeforeRelease = 500;

  CudaDevice(const DriverApi& api, std::span<const uint8_t> fatbin, Options options);
  // Frees nothing: at process exit the driver may already be gone; contexts
  // release their memory in ReleaseContext or when they are destroyed.
  ~CudaDevice() override = default;

  // Loads the kernel into `context` (0: the current one), allocates its
  // rings and events. Idempotent; false (one stderr line) when anything
  // fails, and the context then stays unmeasured. Thread-safe. Enqueue
  // calls it for a context it has not seen; callers need not.
  bool PrepareContext(uint64_t context);

  // False when refused, counted once in CaptureCounters as why:
  // device_unprepared (context not (yet) measured), ring_full (no space
  // now, or a batch bigger than any ring) or device_errors (a driver call
  // failed, or the context was released while the batch was queued).
  [[nodiscard]] bool Enqueue(uint64_t stream, std::span<const MeasureItem> items,
                             uint64_t ticket) override;
  // Also grows and trims the rings (the only place that allocates after a
  // context's preparation): call it from the engine's thread, never from a
  // launch callback.
  void Poll(const ResultFn& fn) override;
  // Polls the batches' events (never cuEventSynchronize) until all are
  // done or options.exit_wait has passed: a stream that never drains (an
  // NCCL kernel waiting for a dead peer) must not keep the process from
  // exiting. Batches still running then are left (their launches are
  // written as dropped): counter exit_wait_expired, one stderr line.
  void Drain() override;
  // Tensor dumps: copies on the launch's stream into pinned memory
  // (cuda_dump_copier.h; defined in cuda_dump_copier.cc).
  [[nodiscard]] bool EnqueueCopy(uint64_t stream, std::span<const MeasureItem> items,
                                 uint64_t ticket) override;
  void PollCopies(const CopyFn& fn, bool wait) override;

  // A context is about to be destroyed (CUPTI's CONTEXT_DESTROY_STARTING,
  // on the application's thread): waits for its batches - outside the
  // mutex, polled, at most options.exit_wait - keeps their results for the
  // next Poll, then frees its rings outside the mutex. When the wait ran
  // out nothing is freed (cuMemFree would wait for the stuck work too; the
  // driver frees it with the context) and the batches are forgotten.
  void ReleaseContext(uint64_t context);
  // The same at process exit, after Drain: bookkeeping only, no driver call.
  void ForgetContext(uint64_t context);

  // Confirm buffer ranges through `oracle` (the engine's per-step cache of
  // driver answers) instead of one driver query per buffer. Not owned.
  void SetRangeOracle(RangeOracle* oracle) { ranges_ = oracle; }

 private:
  // One piece of a context's ring: device memory for batches, pinned host
  // memory for staging and results, each a FIFO ByteRing.
  struct Chunk {
    uint64_t device_base = 0;  // CUdeviceptr
    uint8_t* host_base = nullptr;
    ByteRing device_ring, host_ring;
  };
  struct Batch {
    uint64_t ticket;
    uint32_t count;
    uint32_t chunk;       // index into Context::chunks
    uint64_t device_bytes;  // ring space it holds (Context::in_use)
    void* event;          // CUevent; null: nothing of the batch was queued
    const void* results;  // BufferStats[count] in the host ring
    bool deliver;         // false: a failed batch that only holds ring space
    bool queued;          // false: Enqueue is queueing its work, outside mu_
  };
  enum class State : uint8_t { kNew, kPreparing, kReady, kFailed };
  struct Context {
    uint64_t handle = 0;
    State state = State::kNew;
    void* function = nullptr;  // CUfunction: the kernel loaded into this context
    int device = -1;           // its device ordinal (buffers of other devices are refused)
    std::vector<std::unique_ptr<Chunk>> chunks;
    uint64_t ring_bytes = 0;   // device bytes of all chunks
    uint64_t in_use = 0;       // device bytes held by batches in flight
    uint64_t wanted = 0;       // a refused batch's device bytes: Poll grows the ring for it
    uint64_t largest = 0;      // the largest batch yet (device bytes)
    uint32_t idle_polls = 0;   // Polls the newest grown chunk has been empty in a row
    uint32_t generation = 0;   // ReleaseContexts so far
    bool growing = false;      // Poll is allocating or freeing a chunk (outside mu_)
    std::deque<Batch> in_flight;
    std::vector<void*> free_events;
  };
  struct Parked {
    uint64_t ticket;
    std::vector<BufferStats> stats;
    bool failed;  // the batch's event reported an error
  };
  enum class Prepared : uint8_t { kReady, kFailed, kBusy };
  struct BatchLayout;  // the byte layout of one batch (cuda_device.cc)
  // A batch's place, taken by ReserveBatch: its space in one chunk (staging
  // and results in the host part, the batch in the device part), an event
  // from the pool (null when the pool ran dry) and its FIFO entry, not yet
  // queued.
  struct Reservation {
    Batch* batch = nullptr;  // null: refused, as `refused` says
    Counter refused = Counter::kCount;
    uint8_t* host = nullptr;
    uint64_t device = 0;       // CUdeviceptr
    void* event = nullptr;     // CUevent
    void* function = nullptr;  // CUfunction
    uint32_t generation = 0;   // the context's, to tell a release meanwhile
  };

  // The context `stream` belongs to (the current one when the driver cannot
  // say); 0 when there is none. No lock: driver calls only.
  uint64_t StreamContext(void* stream);
  // The ready context `handle`, preparing it first when it is new. The
  // preparation runs outside mu_: other threads' Enqueues in other contexts
  // go on meanwhile, and one in the same context is refused (unprepared),
  // never made to wait. Null when the context is not (yet) measured.
  Context* ReadyContext(uint64_t handle);
  // Kernel load, first chunk, events for `c` (state kPreparing, owned by
  // the calling thread). No lock held; pushes `c`'s context for the calls.
  Prepared Prepare(Context& c);
  bool LoadKernel();
  // A chunk of `device_bytes` (and its pinned part). Outside mu_.
  std::unique_ptr<Chunk> AllocateChunk(uint64_t device_bytes);
  // Bytes the ring of `c` may grow by for a batch of `need` device bytes
  // with `free` of `total` GPU bytes free now, or 0 (the budget above).
  uint64_t GrowthFor(const Context& c, uint64_t need, uint64_t free, uint64_t total) const;
  // From Poll, without mu_: adds a chunk to every ready context that asked
  // for one or is more than half full, and frees grown chunks idle long
  // enough. Driver calls in each context, outside the mutex.
  void ResizeRings();
  // The ring bytes of all contexts changed by `delta`: footer ring_bytes
  // keeps the most they held at once. Under mu_.
  void NoteRingBytesLocked(int64_t delta);
  // Under mu_ (taken here), never allocating: the batch's place in `c`,
  // after recycling what finished; when no chunk has room, asks Poll to
  // grow the ring (Context::wanted) and refuses (ring_full).
  Reservation ReserveBatch(Context& c, uint64_t ticket, uint32_t count, const BatchLayout& layout);
  // Without mu_: stages the items into the reserved host space and queues
  // on `stream` the copy in, the reduction, the copy back and the event
  // record (these block while the stream's launch queue is full). True when
  // all of it was queued; `recorded`: an event follows whatever was queued,
  // also after a failure.
  bool QueueBatch(void* stream, std::span<const MeasureItem> items, uint64_t tiles,
                  const BatchLayout& layout, const Reservation& r, bool* recorded);
  // Checks each item's range with the driver; unconfirmed ones get 0 bytes,
  // and so do ranges on another device than `device` (the launch's ordinal;
  // -1: unknown): a reduction reading another GPU's memory without peer
  // access faults (counter ranges_other_device).
  void ConfirmRanges(std::span<const MeasureItem> items, int device, std::vector<MeasureItem>* out);
  // The device ordinal of `context` (-1 when the driver cannot say).
  int ContextDevice(uint64_t context);
  // Moves finished batches of `c` (FIFO order) to parked_ and recycles
  // their ring space. Never waits (no cuEventSynchronize anywhere: every
  // wait is polled against a deadline, WaitForEvents).
  void RetireLocked(Context& c);
  // Empties `c` for a new context under the same handle. Under mu_.
  void ResetLocked(Context& c);
  // Polls each (context, event) until it completes or `deadline`; false
  // when the deadline came first (counted, said once). No lock held.
  bool WaitForEvents(const std::vector<std::pair<uint64_t, void*>>& waits,
                     std::chrono::steady_clock::time_point deadline);

  const DriverApi& api_;
  std::span<const uint8_t> fatbin_;
  Options options_;
  // Bookkeeping only: never held across a CUPTI call, a wait of ours, or a
  // driver call that can block. Enqueue (in the application's launch
  // callback) reserves ring space, an event from the pool and the batch's
  // FIFO place under it, then stages, copies, launches and records without
  // it: those asynchronous calls block while the stream's launch queue is
  // full, and under the mutex every other launching thread and Poll would
  // wait behind that one stream - with one thread per GPU, a deadlock once
  // that queue waits for another GPU (review round 4, finding 11). A batch
  // being queued is marked (Batch::queued): retirement stops at it and
  // ReleaseContext frees nothing under it. Under the mutex run only
  // cuEventQuery (documented as never blocking) and context push/pop.
  // Context preparation, event creation, chunk allocation and freeing, and
  // the waits of Drain and ReleaseContext run without it. One mutex for all
  // contexts is enough once nothing under it blocks.
  std::mutex mu_;
  std::mutex load_mu_;  // the one kernel load; only try_lock'ed on the launch path
  void* library_ = nullptr;  // CUlibrary
  std::atomic<void*> kernel_{nullptr};  // CUkernel
  std::atomic<bool> kernel_failed_{false};
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<Parked> parked_;
  RangeOracle* ranges_ = nullptr;
  std::atomic<bool> warned_unconfirmed_{false}, warned_full_{false}, warned_budget_{false},
      warned_wait_{false}, warned_other_device_{false};
  uint64_t ring_total_ = 0, ring_peak_ = 0;  // all contexts' ring bytes (under mu_)
  CudaDumpCopier dump_copier_{api_};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DEVICE_CUDA_DEVICE_H_
