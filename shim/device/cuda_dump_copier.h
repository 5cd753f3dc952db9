// File: shim/device/cuda_dump_copier.h
//
// The GPU half of tensor dumps (docs/format.md section 5): copies the bytes
// of a dumped launch's buffers into pinned host memory with
// cuMemcpyDtoHAsync on the launch's own stream - at ENTER (before the kernel
// is queued) and at EXIT (after it) - and records an event behind them. No
// device-wide or stream synchronisation: Poll (the engine's writer thread)
// hands out a copy once its event has completed, then frees its pinned
// memory. Pinned memory is allocated per copy, only for launches the dump
// selector picked (never inside a stream capture: the engine does not dump
// such launches), and the engine's NUMTRACE_DUMP_MAX_BYTES bounds the total,
// so at most that much is ever held.
//
// Failures are loud: each failing driver call prints one line (NUMTRACE_CU_CHECK)
// and the engine notes the dump as incomplete; the job is never affected
// (the copies only read its buffers).
//
// Example (inside CudaDevice, which forwards Device::EnqueueCopy/PollCopies):
//   CudaDumpCopier copier(DriverApi::Instance());
//   copier.Enqueue(stream, items, ticket);   // launch callback thread
//   copier.Poll(fn);                         // writer thread
#ifndef NUMTRACE_SHIM_DEVICE_CUDA_DUMP_COPIER_H_
#define NUMTRACE_SHIM_DEVICE_CUDA_DUMP_COPIER_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

#include "shim/engine/device.h"

namespace numtrace::shim {

struct DriverApi;

class CudaDumpCopier {
 public:
  explicit CudaDumpCopier(const DriverApi& api) : api_(api) {}
  CudaDumpCopier(const CudaDumpCopier&) = delete;
  CudaDumpCopier& operator=(const CudaDumpCopier&) = delete;

  // Queues the copies on `stream` in the calling thread's current context.
  // False when nothing could be queued.
  [[nodiscard]] bool Enqueue(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket);
  // Hands out completed copies, one call per item. Never waits: event
  // queries only (the mutex is held across them); CudaDevice::PollCopies
  // polls against a deadline at exit.
  void Poll(const Device::CopyFn& fn);

  size_t in_flight() const;

 private:
  struct Item {
    uint8_t* host = nullptr;  // pinned; null for an empty buffer
    uint64_t bytes = 0;
  };
  struct Copy {
    uint64_t ticket = 0;
    void* context = nullptr;  // CUcontext the copies and the event belong to
    void* event = nullptr;    // CUevent behind the copies
    std::vector<Item> items;
    bool ok = true;           // false: some copy could not be queued
  };
  void Release(Copy& c);

  const DriverApi& api_;
  mutable std::mutex mu_;
  std::deque<Copy> in_flight_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DEVICE_CUDA_DUMP_COPIER_H_
