// File: shim/driver/driver_queries.h
//
// The few driver questions the callback path asks (what is this kernel, is
// this stream capturing, which device owns this context), behind an
// interface: the switchboard's CPU tests answer them with fakes, the shim
// with LiveDriverQueries over the DriverApi table.
//
// Example:
//   LiveDriverQueries q(DriverApi::Instance());
//   KernelDescription info;
//   if (q.Describe(fn, HandleKind::kEither, &info)) ...  // info.layout from cuFuncGetParamInfo
#ifndef NUMTRACE_SHIM_DRIVER_DRIVER_QUERIES_H_
#define NUMTRACE_SHIM_DRIVER_DRIVER_QUERIES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shim/engine/events.h"

namespace numtrace::shim {

// What numtrace needs from a kernel, queried once per function handle.
struct KernelDescription {
  std::string name;               // cuFuncGetName/cuKernelGetName; may be empty
  std::vector<ParamSlot> layout;  // one slot per parameter, in order
  uint32_t param_bytes = 0;       // max(offset + size) over the layout
  // The callback's symbolName when the handle was described: a later launch
  // of the same handle under another name means the handle was reused.
  std::string symbol;
};

// What a launch's function handle is known to be. The driver launch APIs
// take a CUfunction or a CUkernel cast to one (either); CUDA 13's
// __cudaLaunchKernel hands over a cudaKernel_t, which is a CUkernel
// (driver_types.h); cudaLaunchKernel's is a host stub the driver cannot
// describe (none).
enum class HandleKind : uint8_t { kNone, kEither, kKernel };

// max(offset + size) over `layout`.
uint32_t ParamBytes(std::span<const ParamSlot> layout);

struct DriverApi;

class DriverQueries {
 public:
  virtual ~DriverQueries() = default;
  // Name and parameter layout of a CUfunction or CUkernel handle (`kind`:
  // what the launch path knows it to be, kEither or kKernel); false when
  // the driver knows neither.
  virtual bool Describe(uint64_t function, HandleKind kind, KernelDescription* out) = 0;
  // True while `stream` (already resolved: never NULL) is being captured,
  // and when the driver cannot say (work must not be enqueued there then).
  virtual bool IsCapturing(uint64_t stream) = 0;
  // Device ordinal of `context` (the current one when 0); 0 when unknown.
  virtual int DeviceOf(uint64_t context) = 0;
};

class LiveDriverQueries : public DriverQueries {
 public:
  explicit LiveDriverQueries(const DriverApi& api) : api_(api) {}
  bool Describe(uint64_t function, HandleKind kind, KernelDescription* out) override;
  bool IsCapturing(uint64_t stream) override;
  int DeviceOf(uint64_t context) override;

 private:
  const DriverApi& api_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DRIVER_DRIVER_QUERIES_H_
