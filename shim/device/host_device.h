// File: shim/device/host_device.h
//
// The host reference Device: addresses are host pointers and each Enqueue is
// measured at once with ReduceHost (the same algorithm, the same bits as the
// CUDA kernels). Measuring inside Enqueue is what stream order means on a
// GPU: the reduction sees the buffer as it is right after the launch. The
// results wait in a queue until Poll hands them out, like a device ring.
//
// Test hooks let engine tests imitate a real device: FailNextEnqueues (device
// error), SetCapacity (ring full while results are unpolled) and
// SetHoldResults (results not ready until Drain, like unfinished GPU work),
// FailNextResults (work the GPU reported an error for).
// Thread-safe: every method may be called from any thread.
//
// Example:
//   HostDevice dev;
//   float buf[4] = {1, 2, 3, 4};
//   MeasureItem item{reinterpret_cast<uint64_t>(buf), sizeof buf, DType::kF32};
//   bool ok = dev.Enqueue(/*stream=*/0, {&item, 1}, /*ticket=*/7);  // true
//   dev.Poll([](uint64_t ticket, std::span<const BufferStats> s, bool failed) {
//     // ticket == 7, s.size() == 1, s[0].sum == 10
//   });
#ifndef NUMTRACE_SHIM_DEVICE_HOST_DEVICE_H_
#define NUMTRACE_SHIM_DEVICE_HOST_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

#include "shim/engine/device.h"

namespace numtrace::shim {

class HostDevice : public Device {
 public:
  HostDevice() = default;

  [[nodiscard]] bool Enqueue(uint64_t stream, std::span<const MeasureItem> items,
                             uint64_t ticket) override;
  void Poll(const ResultFn& fn) override;
  void Drain() override;
  // Copies at once (stream order on the host), handed out by PollCopies.
  [[nodiscard]] bool EnqueueCopy(uint64_t stream, std::span<const MeasureItem> items,
                                 uint64_t ticket) override;
  void PollCopies(const CopyFn& fn, bool wait) override;

  // Test hooks.
  // The next `n` Enqueue calls fail (return false, measure nothing).
  void FailNextEnqueues(int n);
  // At most `tickets` results may wait unpolled (held ones included); an
  // Enqueue beyond that fails, as when the device ring is full. 0 = unlimited.
  void SetCapacity(size_t tickets);
  // While on, new results are parked and Poll does not see them until Drain
  // (or SetHoldResults(false)) releases them.
  void SetHoldResults(bool hold);
  // The next `n` accepted measurements complete as failed (Poll's `failed`),
  // as when the GPU reports an error for a batch's event.
  void FailNextResults(int n);
  // The next `n` copies hand out their bytes with the first byte flipped, as
  // a device that copied the wrong thing would (dump hash checks).
  void CorruptNextCopies(int n);

  // Counters, for tests and stats.
  uint64_t enqueued() const;  // successful Enqueue calls
  uint64_t rejected() const;  // failed Enqueue calls

 private:
  struct Result {
    uint64_t ticket;
    std::vector<BufferStats> stats;
    bool failed = false;
  };
  void ReleaseHeldLocked();
  struct Copy {
    uint64_t ticket;
    std::vector<std::vector<uint8_t>> items;
  };
  std::deque<Copy> copies_;
  int corrupt_next_ = 0;

  mutable std::mutex mu_;
  std::deque<Result> ready_;  // visible to Poll
  std::deque<Result> held_;   // parked until Drain
  int fail_next_ = 0;
  int fail_results_ = 0;
  size_t capacity_ = 0;
  bool hold_ = false;
  uint64_t enqueued_ = 0;
  uint64_t rejected_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DEVICE_HOST_DEVICE_H_
