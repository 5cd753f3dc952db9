// File: sim/sim_memory.h
//
// "Device" memory for the simulated training loop: host allocations that are
// announced to the engine exactly as the CUDA layer and the PyTorch hooks
// announce them. Addresses handed to the engine are the host addresses,
// which is what HostDevice measures. Three layouts (--memory):
//   * kTensors: one driver allocation per tensor (cuMemAlloc/cuMemFree, as
//     with PyTorch's cudaMallocAsync backend);
//   * kSegments: a caching allocator - one driver allocation (the segment)
//     holding every tensor at 512-byte steps, the bytes between them NaN
//     (0xFF), and each tensor reported as a block with its requested size
//     (numtrace_tensor_event, as the hooks' tensor map reports PyTorch's);
//   * kSegmentsUnreported: the same segment, its tensors never reported (a
//     PyTorch job whose hooks could not attach): every buffer is the
//     segment, and the trace says the map is not attached.
//
// Example:
//   SimMemory mem(&engine, SimMemory::Layout::kSegments);
//   float* w = mem.Alloc<float>(64 * 32);   // a block of 8192 bytes in the segment
//   ...                                     // freed (OnFree) with `mem`
#ifndef NUMTRACE_SIM_SIM_MEMORY_H_
#define NUMTRACE_SIM_SIM_MEMORY_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "shim/engine/event_sink.h"

namespace numtrace::sim {

class SimMemory {
 public:
  enum class Layout { kTensors, kSegments, kSegmentsUnreported };
  // The segment of the caching layouts: enough for the largest simulated model.
  static constexpr size_t kSegmentBytes = 16u << 20;

  explicit SimMemory(shim::EventSink* sink, Layout layout = Layout::kTensors) : sink_(sink), layout_(layout) {
    if (layout_ == Layout::kTensors) return;
    segment_ = static_cast<uint8_t*>(std::aligned_alloc(512, kSegmentBytes));
    if (segment_ == nullptr) throw std::bad_alloc();
    std::memset(segment_, 0xFF, kSegmentBytes);  // NaN as f32: measuring padding would show
    sink_->OnAlloc({Addr(segment_), kSegmentBytes, shim::AllocKind::kPlain, 0});
    Report(shim::TensorAction::kSegmentAlloc, segment_, kSegmentBytes);
    // What the hooks say once they attached, or could not.
    if (layout_ == Layout::kSegments) {
      sink_->OnTensorMapStatus(shim::TensorMapState::kAttached, "numtrace-sim --memory segments");
    } else {
      sink_->OnTensorMapStatus(shim::TensorMapState::kNotAttached, "numtrace-sim --memory segments-unreported");
    }
  }
  ~SimMemory() {
    for (void* p : blocks_) {
      if (layout_ == Layout::kTensors) {
        sink_->OnFree({Addr(p), 0, shim::AllocKind::kPlain});
        std::free(p);
      } else {
        Report(shim::TensorAction::kFree, p, 0);
      }
    }
    if (segment_ != nullptr) {
      Report(shim::TensorAction::kSegmentFree, segment_, kSegmentBytes);
      sink_->OnFree({Addr(segment_), 0, shim::AllocKind::kPlain});
      std::free(segment_);
    }
  }
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;

  // Zero-filled; 256-byte aligned like cudaMalloc, 512 inside a segment
  // like the caching allocator's blocks.
  template <typename T>
  T* Alloc(size_t count) {
    const size_t bytes = count * sizeof(T);
    void* p = nullptr;
    if (layout_ == Layout::kTensors) {
      const size_t rounded = (bytes + 255) / 256 * 256;
      p = std::aligned_alloc(256, rounded);
      if (p == nullptr) throw std::bad_alloc();
      std::memset(p, 0, rounded);
      sink_->OnAlloc({Addr(p), bytes, shim::AllocKind::kPlain, 0});
    } else {
      if (used_ + bytes > kSegmentBytes) throw std::bad_alloc();
      p = segment_ + used_;
      used_ += (bytes + 511) / 512 * 512;
      Report(shim::TensorAction::kAlloc, p, bytes);
    }
    std::memset(p, 0, bytes);
    blocks_.push_back(p);
    return static_cast<T*>(p);
  }

 private:
  static uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }
  void Report(shim::TensorAction a, const void* p, uint64_t bytes) {
    if (layout_ == Layout::kSegments) sink_->OnTensorEvent({a, 0, Addr(p), bytes});
  }

  shim::EventSink* sink_;
  const Layout layout_;
  uint8_t* segment_ = nullptr;
  size_t used_ = 0;
  std::vector<void*> blocks_;
};

}  // namespace numtrace::sim

#endif  // NUMTRACE_SIM_SIM_MEMORY_H_
