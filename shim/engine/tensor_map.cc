#include "shim/engine/tensor_map.h"

namespace numtrace::shim {

bool TensorMap::Apply(const TensorEvent& e) {
  switch (e.action) {
    case TensorAction::kAlloc:
      if (e.bytes == 0) return false;
      // Insert cuts what it overlaps: a missed free never shadows a new block.
      blocks_.Insert(e.address, e.bytes, AllocKind::kTensorBlock);
      return true;
    case TensorAction::kFree:
      blocks_.Erase(e.address);
      return true;
    case TensorAction::kSegmentAlloc:
      if (e.bytes == 0) return false;
      segments_.Insert(e.address, e.bytes, AllocKind::kTensorBlock);
      return true;
    case TensorAction::kSegmentFree:
      // The blocks of a freed segment are gone with it (expandable segments
      // unmap a tail: only the bytes named).
      // A free without a size frees the whole segment that starts there.
      uint64_t bytes = e.bytes;
      if (bytes == 0) {
        const std::optional<Allocation> segment = segments_.Find(e.address);
        if (!segment || segment->start != e.address) return false;
        bytes = segment->bytes;
      }
      segments_.EraseRange(e.address, bytes);
      blocks_.EraseRange(e.address, bytes);
      return true;
  }
  return false;
}

TensorMap::Resolution TensorMap::Resolve(uint64_t address) const {
  Resolution r;
  if (blocks_.MaybeInside(address)) r.block = blocks_.Find(address);
  if (!r.block && segments_.MaybeInside(address)) r.outside_tensors = segments_.Find(address).has_value();
  return r;
}

}  // namespace numtrace::shim
