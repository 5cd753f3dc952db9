// File: shim/driver/driver_range_oracle.cc
//
// cuPointerGetAttributes as a RangeOracle; see driver_range_oracle.h.
#include "shim/driver/driver_range_oracle.h"

#include <algorithm>

#include "shim/driver/driver_api.h"
#include "shim/engine/capture_counters.h"
#include "shim/driver/self_call_guard.h"

namespace numtrace::shim {

std::optional<Allocation> MappedRange(const DriverApi& api, uint64_t address) {
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned int mapped = 0;
  int ordinal = -1;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[] = {&start, &size, &mapped, &ordinal};
  // An error (e.g. an address of no context) is an answer: not confirmed.
  if (api.cuPointerGetAttributes(4, attrs, data, address) != CUDA_SUCCESS) return std::nullopt;
  if (mapped == 0 || start == 0 || size == 0 || address < start || address - start >= size) {
    return std::nullopt;
  }
  // The range may be a reservation: bound it by what is mapped here.
  CUdeviceptr base = 0;
  size_t piece = 0;
  if (api.cuMemGetAddressRange_v2 == nullptr ||
      api.cuMemGetAddressRange_v2(&base, &piece, address) != CUDA_SUCCESS || base == 0 ||
      piece == 0 || address < base || address - base >= piece) {
    CaptureCounters::Get().Add(Counter::kRangesUnmapped);
    return std::nullopt;
  }
  const uint64_t lo = std::max<uint64_t>(start, base);
  const uint64_t hi = std::min<uint64_t>(uint64_t{start} + size, uint64_t{base} + piece);
  if (address < lo || address >= hi) {
    CaptureCounters::Get().Add(Counter::kRangesUnmapped);
    return std::nullopt;
  }
  return Allocation{lo, hi - lo, AllocKind::kPlain, ordinal};
}

std::optional<Allocation> DriverRangeOracle::Confirm(uint64_t address) {
  SelfCallGuard guard;
  return MappedRange(api_, address);
}

}  // namespace numtrace::shim
