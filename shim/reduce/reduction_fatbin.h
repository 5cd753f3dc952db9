// File: shim/reduce/reduction_fatbin.h
//
// The reduction kernels of reduce_kernels.cu as an embedded fatbin (SASS for
// sm_80/sm_90/sm_100 plus compute_100 PTX), built by cmake/cuda.cmake into the
// library numtrace_reduce_fatbin. Only exists when NUMTRACE_WITH_CUDA is ON.
//
// Example:
//   std::span<const uint8_t> fb = ReductionFatbin();
//   cuLibraryLoadData(&lib, fb.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
//   cuLibraryGetKernel(&kernel, lib, kReduceBatchKernelName);  // batch_abi.h
#ifndef NUMTRACE_SHIM_REDUCE_REDUCTION_FATBIN_H_
#define NUMTRACE_SHIM_REDUCE_REDUCTION_FATBIN_H_

#include <cstdint>
#include <span>

namespace numtrace::shim {

std::span<const uint8_t> ReductionFatbin();

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_REDUCE_REDUCTION_FATBIN_H_
