// File: shim/engine/tensor_map.h
//
// The tensors of a framework allocator that sub-allocates its own segments
// (PyTorch's default caching allocator): the driver sees one cudaMalloc per
// segment (2 MiB .. GiBs), so the allocation map alone would make every
// tensor in a segment one "buffer" - the whole segment. The PyTorch hooks
// attach to the allocator's own trace (scripts/hooks/numtrace_tensor_map.py)
// and report each block (a tensor's storage: start and requested size) and
// each segment through the C API; this map keeps both, so the buffer scan
// resolves a pointer to the tensor it points into.
//
// A pointer inside a reported segment but in no live block is a stale word
// or memory the allocator holds free: it is refused and counted
// (pointers_outside_tensors), never measured as the segment. Pointers
// outside every reported segment fall through to the allocation map
// (driver allocations: cuBLAS workspaces made by other libraries, NCCL).
//
// Thread-safety: reports come from the allocator's threads (under its lock),
// lookups from launching threads; both go through AllocMap's sharded locks.
//
// Example:
//   TensorMap t;
//   t.Apply({TensorAction::kSegmentAlloc, 0, 0x7000'0000'0000, 2 << 20});
//   t.Apply({TensorAction::kAlloc, 0, 0x7000'0000'0200, 4096});
//   t.Resolve(0x7000'0000'0210).block->start;                      // 0x7000'0000'0200
//   t.Resolve(0x7000'0010'0000).outside_tensors;                   // true
#ifndef NUMTRACE_SHIM_ENGINE_TENSOR_MAP_H_
#define NUMTRACE_SHIM_ENGINE_TENSOR_MAP_H_

#include <atomic>
#include <cstdint>
#include <optional>

#include "shim/engine/alloc_map.h"
#include "shim/engine/events.h"

namespace numtrace::shim {

class TensorMap {
 public:
  // False for a malformed report (zero bytes for an alloc or a segment).
  bool Apply(const TensorEvent& e);

  struct Resolution {
    std::optional<Allocation> block;  // the live block holding the pointer
    bool outside_tensors = false;     // in a reported segment, in no live block
  };
  Resolution Resolve(uint64_t address) const;

  // Cheap pre-filter, as AllocMap::MaybeInside.
  bool MaybeInside(uint64_t v) const { return segments_.MaybeInside(v) || blocks_.MaybeInside(v); }
  bool empty() const { return segments_.size() == 0 && blocks_.size() == 0; }
  size_t blocks() const { return blocks_.size(); }
  size_t segments() const { return segments_.size(); }

 private:
  AllocMap blocks_;
  AllocMap segments_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_TENSOR_MAP_H_
