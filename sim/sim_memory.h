// File: sim/sim_memory.h
//
// "Device" memory for the simulated training loop: host allocations that are
// announced to the engine exactly as the CUPTI layer announces cuMemAlloc /
// cuMemFree, one allocation per tensor (as with PyTorch's cudaMallocAsync
// backend). Addresses handed to the engine are the host addresses, which is
// what HostDevice measures.
//
// Example:
//   SimMemory mem(&engine);
//   float* w = mem.Alloc<float>(64 * 32);   // engine.OnAlloc({w, 8192 bytes})
//   ...                                     // freed (OnFree) with `mem`
#ifndef NUMTRACE_SIM_SIM_MEMORY_H_
#define NUMTRACE_SIM_SIM_MEMORY_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "shim/engine/event_sink.h"

namespace numtrace::sim {

class SimMemory {
 public:
  explicit SimMemory(shim::EventSink* sink) : sink_(sink) {}
  ~SimMemory() {
    for (void* p : blocks_) {
      sink_->OnFree({reinterpret_cast<uint64_t>(p), 0, shim::AllocKind::kPlain});
      std::free(p);
    }
  }
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;

  // Zero-filled, 256-byte aligned like cudaMalloc.
  template <typename T>
  T* Alloc(size_t count) {
    size_t bytes = (count * sizeof(T) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, bytes);
    std::memset(p, 0, bytes);
    blocks_.push_back(p);
    sink_->OnAlloc({reinterpret_cast<uint64_t>(p), count * sizeof(T), shim::AllocKind::kPlain, 0});
    return static_cast<T*>(p);
  }

 private:
  shim::EventSink* sink_;
  std::vector<void*> blocks_;
};

}  // namespace numtrace::sim

#endif  // NUMTRACE_SIM_SIM_MEMORY_H_
