// File: shim/driver/driver_range_oracle.h
//
// The driver's answer to "which allocation holds this address" for the
// buffer scan (shim/engine/range_oracle.h) and the pre-read check of
// CudaDevice: MappedRange, with numtrace's own calls hidden from its
// callbacks. cuPointerGetAttributes (range start, range size, mapped) names
// the range, but cuda.h describes RANGE_START_ADDR/RANGE_SIZE as the
// allocation's address range - for VMM and pool memory the reservation,
// not necessarily what is mapped. So the answer is cut down to the piece
// cuMemGetAddressRange reports as mapped around the address; a pointer it
// refuses is not confirmed (counter ranges_unmapped). The driver returns
// success with zeros for a pointer it does not know; that, an unmapped
// range or an error is "not confirmed". The answer carries the range's
// device ordinal (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL): CudaDevice refuses
// a range of another GPU than the launch's.
//
// Example:
//   DriverRangeOracle driver(DriverApi::Instance());
//   StepRangeCache cache(&driver);
//   Runtime::Get().SetRangeOracle(&cache);
#ifndef NUMTRACE_SHIM_DRIVER_DRIVER_RANGE_ORACLE_H_
#define NUMTRACE_SHIM_DRIVER_DRIVER_RANGE_ORACLE_H_

#include "shim/engine/range_oracle.h"

namespace numtrace::shim {

struct DriverApi;

// The mapped device range holding `address`, or nullopt. Counts
// ranges_unmapped when the attributes named a range that
// cuMemGetAddressRange does not map at `address`. Call inside a SelfCallGuard.
std::optional<Allocation> MappedRange(const DriverApi& api, uint64_t address);

class DriverRangeOracle : public RangeOracle {
 public:
  explicit DriverRangeOracle(const DriverApi& api) : api_(api) {}
  std::optional<Allocation> Confirm(uint64_t address) override;

 private:
  const DriverApi& api_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DRIVER_DRIVER_RANGE_ORACLE_H_
