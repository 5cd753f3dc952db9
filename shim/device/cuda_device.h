// File: shim/device/cuda_device.h
//
// The Device that runs the reductions on the GPU: the batched reduction
// kernel of shim/reduce (batch_abi.h) is loaded once from the embedded
// fatbin with cuLibraryLoadData and launched on the intercepted launch's own
// stream, so stream order alone puts the measurement after (or, at ENTER,
// before) the kernel: no host synchronisation per launch.
//
// Memory: per CUDA context, one device ring (config.device_memory, 64 MiB by
// default) holds each batch's items, counters, tile partials and results,
// and one pinned host ring holds the staged items and the copied-back
// results. A context is prepared lazily - kernel loaded, both rings and a
// pool of events allocated - at the first Enqueue in it, which is always
// outside stream capture (Enqueue refuses capturing streams before anything
// else) and in relaxed capture mode; never inside CUPTI's context-creation
// callback, where allocating is known to deadlock other tools. Later
// Enqueues in the context allocate nothing. A context whose preparation
// failed gets no measurement (one line, footer counter contexts_failed).
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
#include "shim/device/device.h"

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
// CUDA version; driver version from /proc/driver/nvidia/version).
std::optional<DeviceInfo> QueryDeviceInfo(const DriverApi& api, uint64_t context);

class CudaDevice : public Device {
 public:
  struct Options {
    uint64_t device_memory = 64ull << 20;  // per context
    uint64_t host_memory = 0;              // pinned, per context; 0: device_memory / 16, >= 1 MiB
  };
  struct Stats {
    std::atomic<uint64_t> batches{0};
    std::atomic<uint64_t> full{0};        // refused: ring full or batch too big
    std::atomic<uint64_t> errors{0};      // refused: a driver call failed
    std::atomic<uint64_t> unprepared{0};  // refused: the current context was not prepared
  };

  CudaDevice(const DriverApi& api, std::span<const uint8_t> fatbin, Options options);
  // Frees nothing: at process exit the driver may already be gone; contexts
  // release their memory in ReleaseContext or when they are destroyed.
  ~CudaDevice() override = default;

  // Loads the kernel into `context` (0: the current one), allocates its
  // rings and events. Idempotent; false (one stderr line) when anything
  // fails, and the context then stays unmeasured. Thread-safe. Enqueue
  // calls it for a context it has not seen; callers need not.
  bool PrepareContext(uint64_t context);

  [[nodiscard]] bool Enqueue(uint64_t stream, std::span<const MeasureItem> items,
                             uint64_t ticket) override;
  void Poll(const ResultFn& fn) override;
  void Drain() override;
  // Tensor dumps: copies on the launch's stream into pinned memory
  // (cuda_dump_copier.h; defined in cuda_dump_copier.cc).
  [[nodiscard]] bool EnqueueCopy(uint64_t stream, std::span<const MeasureItem> items,
                                 uint64_t ticket) override;
  void PollCopies(const CopyFn& fn, bool wait) override;

  // A context is about to be destroyed: wait for its batches, keep their
  // results for the next Poll, free its rings.
  void ReleaseContext(uint64_t context);

  const Stats& stats() const { return stats_; }

  // Confirm buffer ranges through `oracle` (the engine's per-step cache of
  // driver answers) instead of one driver query per buffer. Not owned.
  void SetRangeOracle(RangeOracle* oracle) { ranges_ = oracle; }

 private:
  struct Batch {
    uint64_t ticket;
    uint32_t count;
    void* event;          // CUevent
    const void* results;  // BufferStats[count] in the host ring
    bool deliver;         // false: a failed batch that only holds ring space
  };
  struct Context {
    uint64_t handle = 0;
    bool failed = false;
    void* function = nullptr;  // CUfunction: the kernel loaded into this context
    uint64_t device_base = 0;  // CUdeviceptr
    uint8_t* host_base = nullptr;
    ByteRing device_ring, host_ring;
    std::deque<Batch> in_flight;
    std::vector<void*> free_events;
  };
  struct Parked {
    uint64_t ticket;
    std::vector<BufferStats> stats;
  };

  // The context `stream` belongs to (the current one when the driver cannot
  // say), prepared now if it is new; null when it could not be prepared.
  Context* ContextForStreamLocked(void* stream);
  Context* PrepareLocked(uint64_t context);
  // Checks each item's range with the driver; unconfirmed ones get 0 bytes.
  void ConfirmRanges(std::span<const MeasureItem> items, std::vector<MeasureItem>* out);
  bool InitLocked(Context& c);
  bool AcquireEventLocked(Context& c, void** event);
  bool LoadKernelLocked();
  // Moves finished batches of `c` (FIFO order) to parked_ and recycles
  // their ring space; `wait` blocks until all are finished.
  void RetireLocked(Context& c, bool wait);

  const DriverApi& api_;
  std::span<const uint8_t> fatbin_;
  Options options_;
  std::mutex mu_;
  void* library_ = nullptr;  // CUlibrary
  void* kernel_ = nullptr;   // CUkernel
  bool kernel_failed_ = false;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<Parked> parked_;
  std::vector<MeasureItem> confirmed_;  // Enqueue's scratch, under mu_
  RangeOracle* ranges_ = nullptr;
  std::atomic<bool> warned_unconfirmed_{false};
  Stats stats_;
  CudaDumpCopier dump_copier_{api_};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DEVICE_CUDA_DEVICE_H_
