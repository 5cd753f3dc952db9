// File: shim/driver/driver_api.h
//
// The driver API functions numtrace calls, resolved with dlsym from the
// libcuda.so.1 the job loaded: never hard-linked, so libnumtrace.so loads
// (and stays asleep) on machines without a driver. Names are the real
// exported symbols (cuMemAlloc_v2, not the cuda.h macro cuMemAlloc).
// No cuEventSynchronize: every wait of numtrace's polls cuEventQuery against
// a deadline (a stream that never drains must not hang the job).
// cuda_device.cc and shim/cupti/ are the only users.
//
// Example:
//   DriverApi& cu = DriverApi::Instance();
//   if (cu.Load(&error)) NUMTRACE_CU_CHECK(cu.cuCtxGetDevice(&dev));
#ifndef NUMTRACE_SHIM_DRIVER_DRIVER_API_H_
#define NUMTRACE_SHIM_DRIVER_DRIVER_API_H_

#include <cuda.h>

#include <string>

namespace numtrace::shim {

// Required: Load fails without them (the CUDA 12.4+ parameter queries
// included: CUDA 13 drivers all have them).
#define NUMTRACE_DRIVER_FUNCTIONS(X) \
  X(cuGetErrorString)                \
  X(cuDriverGetVersion)              \
  X(cuCtxGetCurrent)                 \
  X(cuCtxSetCurrent)                 \
  X(cuCtxGetDevice)                  \
  X(cuCtxPushCurrent_v2)             \
  X(cuCtxPopCurrent_v2)              \
  X(cuDeviceGet)                     \
  X(cuDeviceGetName)                 \
  X(cuDeviceGetAttribute)            \
  X(cuDeviceGetUuid_v2)              \
  X(cuFuncGetName)                   \
  X(cuFuncGetParamInfo)              \
  X(cuKernelGetName)                 \
  X(cuKernelGetParamInfo)            \
  X(cuStreamIsCapturing)             \
  X(cuStreamGetCtx)                  \
  X(cuPointerGetAttributes)          \
  X(cuMemGetAddressRange_v2)         \
  X(cuMemGetInfo_v2)                 \
  X(cuStreamSynchronize)             \
  X(cuLibraryLoadData)               \
  X(cuLibraryUnload)                 \
  X(cuLibraryGetKernel)              \
  X(cuKernelGetFunction)             \
  X(cuThreadExchangeStreamCaptureMode) \
  X(cuLaunchKernel)                  \
  X(cuMemAlloc_v2)                   \
  X(cuMemFree_v2)                    \
  X(cuMemHostAlloc)                  \
  X(cuMemFreeHost)                   \
  X(cuMemcpyHtoDAsync_v2)            \
  X(cuMemcpyDtoHAsync_v2)            \
  X(cuMemcpyDtoDAsync_v2)            \
  X(cuEventCreate)                   \
  X(cuEventRecord)                   \
  X(cuEventQuery)                    \
  X(cuEventDestroy_v2)               \
  X(cuInit)                          \
  X(cuDevicePrimaryCtxRetain)        \
  X(cuStreamCreate)                  \
  X(cuMemsetD8_v2)

struct DriverApi {
#define NUMTRACE_DECLARE(fn) decltype(&::fn) fn = nullptr;
  NUMTRACE_DRIVER_FUNCTIONS(NUMTRACE_DECLARE)
#undef NUMTRACE_DECLARE

  static DriverApi& Instance();

  // dlopens libcuda.so.1 (the loaded copy when there is one) and resolves
  // every function; false with `error` set when anything is missing.
  bool Load(std::string* error);
  bool LoadFrom(void* handle, std::string* error);
  bool loaded() const { return cuGetErrorString != nullptr; }
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_DRIVER_DRIVER_API_H_
