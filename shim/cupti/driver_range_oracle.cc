// File: shim/cupti/driver_range_oracle.cc
//
// cuPointerGetAttributes as a RangeOracle; see driver_range_oracle.h.
#include "shim/cupti/driver_range_oracle.h"

#include "shim/cupti/driver_api.h"
#include "shim/cupti/self_call_guard.h"

namespace numtrace::shim {

std::optional<Allocation> DriverRangeOracle::Confirm(uint64_t address) {
  SelfCallGuard guard;
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned int mapped = 0;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_MAPPED};
  void* data[] = {&start, &size, &mapped};
  // An error (e.g. an address of no context) is an answer: not confirmed.
  if (api_.cuPointerGetAttributes(3, attrs, data, address) != CUDA_SUCCESS) return std::nullopt;
  if (mapped == 0 || start == 0 || size == 0 || address < start || address - start >= size) {
    return std::nullopt;
  }
  return Allocation{start, size, AllocKind::kPlain};
}

}  // namespace numtrace::shim
