// File: shim/engine/device.h
//
// The seam between the engine and whatever runs the reductions: the CUDA
// implementation (cuda_device.*, our own kernels on the launch's stream) or
// the host reference (host_device.*, the same algorithm on host memory, used
// by every CPU test). The engine never waits on a Device in the launch path:
// Enqueue only queues work; results arrive later through Poll.
//
// Example (host reference, addresses are host pointers):
//   HostDevice dev;
//   MeasureItem item{reinterpret_cast<uint64_t>(buf), 4096, DType::kF32};
//   dev.Enqueue(/*stream=*/0, {&item, 1}, /*ticket=*/7);
//   dev.Poll([](uint64_t ticket, std::span<const BufferStats> s, bool failed) { ... });
#ifndef NUMTRACE_SHIM_ENGINE_DEVICE_H_
#define NUMTRACE_SHIM_ENGINE_DEVICE_H_

#include <cstdint>
#include <functional>
#include <span>

#include "common/format/dtype.h"
#include "common/format/stats.h"

namespace numtrace::shim {

struct MeasureItem {
  uint64_t address = 0;  // device address (host address for HostDevice)
  uint64_t bytes = 0;
  DType dtype = DType::kRaw;
};

class Device {
 public:
  virtual ~Device() = default;

  // Queues a measurement of `items` on `stream`, after everything already
  // queued there. Returns false when it cannot (ring full, device error): the
  // caller counts the launch as dropped. Never blocks on device work.
  [[nodiscard]] virtual bool Enqueue(uint64_t stream, std::span<const MeasureItem> items,
                                     uint64_t ticket) = 0;

  using ResultFn =
      std::function<void(uint64_t ticket, std::span<const BufferStats> stats, bool failed)>;
  // Hands every measurement completed since the last call to `fn`, in any
  // order, one call per ticket with one BufferStats per item. Non-blocking.
  // `failed`: the device reported an error for that ticket's work (no
  // stats): its launch is written as dropped, never waited for.
  virtual void Poll(const ResultFn& fn) = 0;

  // Waits until everything enqueued so far has completed (step end, exit).
  virtual void Drain() = 0;

  // Tensor dumps (docs/format.md section 5). Copies the bytes of each item
  // into host memory on `stream`, after everything queued there (at a
  // launch's ENTER: its inputs as the kernel will find them; at EXIT: what
  // it left). False when the copy cannot be queued; the default device
  // cannot copy at all. Never a device-wide synchronisation.
  [[nodiscard]] virtual bool EnqueueCopy(uint64_t stream, std::span<const MeasureItem> items,
                                         uint64_t ticket) {
    (void)stream, (void)items, (void)ticket;
    return false;
  }
  // One call per copied item: `bytes` is valid only during the call; null
  // `bytes.data()` with `failed` when the device could not complete it.
  using CopyFn = std::function<void(uint64_t ticket, size_t item, std::span<const uint8_t> bytes,
                                    bool failed)>;
  // Hands out finished copies, in any order; with `wait`, first waits for
  // every copy queued so far (exit). Call from the engine's thread.
  virtual void PollCopies(const CopyFn& fn, bool wait) { (void)fn, (void)wait; }
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_DEVICE_H_
