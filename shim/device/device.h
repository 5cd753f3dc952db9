// File: shim/device/device.h
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
//   dev.Poll([](uint64_t ticket, std::span<const BufferStats> s) { ... });
#ifndef NUMTRACE_SHIM_DEVICE_DEVICE_H_
#define NUMTRACE_SHIM_DEVICE_DEVICE_H_

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

  using ResultFn = std::function<void(uint64_t ticket, std::span<const BufferStats> stats)>;
  // Hands every measurement completed since the last call to `fn`, in any
  // order, one call per ticket with one BufferStats per item. Non-blocking.
  virtual void Poll(const ResultFn& fn) = 0;

  // Waits until everything enqueued so far has completed (step end, exit).
  virtual void Drain() = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DEVICE_DEVICE_H_
