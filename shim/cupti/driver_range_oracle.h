// File: shim/cupti/driver_range_oracle.h
//
// The driver's answer to "which allocation holds this address" for the
// buffer scan (shim/engine/range_oracle.h): one cuPointerGetAttributes
// (range start, range size, mapped) with numtrace's own calls hidden from
// its callbacks. The driver returns success with zeros for a pointer it does
// not know; that, an unmapped range or an error is "not confirmed".
//
// Example:
//   DriverRangeOracle driver(DriverApi::Instance());
//   StepRangeCache cache(&driver);
//   Runtime::Get().SetRangeOracle(&cache);
#ifndef NUMTRACE_SHIM_CUPTI_DRIVER_RANGE_ORACLE_H_
#define NUMTRACE_SHIM_CUPTI_DRIVER_RANGE_ORACLE_H_

#include "shim/engine/range_oracle.h"

namespace numtrace::shim {

struct DriverApi;

class DriverRangeOracle : public RangeOracle {
 public:
  explicit DriverRangeOracle(const DriverApi& api) : api_(api) {}
  std::optional<Allocation> Confirm(uint64_t address) override;

 private:
  const DriverApi& api_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_DRIVER_RANGE_ORACLE_H_
