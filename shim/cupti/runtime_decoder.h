// File: shim/cupti/runtime_decoder.h
//
// The runtime API callbacks numtrace enables as witnesses
// (runtime_call_stack.h) and the fallback decoding of their parameter
// structs (generated_cuda_runtime_api_meta.h) for the case where no driver
// callback fired inside them. Pure functions, no runtime call: numtrace
// never calls into a cudart copy (PyTorch, cuBLAS and NCCL each carry their
// own), least of all from inside that copy's callback.
//
//   - cudaLaunchKernel / cudaLaunchKernelExC / cudaLaunchCooperativeKernel
//     (+ _ptsz): `func` is the host stub of the kernel, meaningful only to
//     its own cudart: the launch is decoded without a parameter layout
//     (HandleKind::kNone: counted, listed, no buffers).
//   - __cudaLaunchKernel (+ _ptsz), CUDA 13's lowering of <<<>>>: its first
//     argument is a cudaKernel_t, i.e. a CUkernel (driver_types.h), which
//     the driver's cuKernelGetParamInfo describes. CUPTI 13.0 ships no
//     parameter struct for it; RuntimeLaunchKernelParams below mirrors its
//     declaration in crt/device_functions.h [unverified on a GPU: the probe
//     of scripts/gpu-check.sh says whether the fallback ever runs]. A
//     geometry no launch can have (0 grid, > 1024 threads a block) is taken
//     as a misread and not decoded (runtime_decoded < runtime_without_driver).
//   - cudaMalloc/Free, cudaMallocAsync/FreeAsync, cudaMallocFromPoolAsync
//     (+ _ptsz): AllocEvent/FreeEvent like the driver ones.
//
// Example:
//   if (IsRuntimeLaunchId(cbid)) {
//     std::optional<RuntimeLaunch> l = ExtractRuntimeLaunch(cbid, d.functionParams);
//   }
#ifndef NUMTRACE_SHIM_CUPTI_RUNTIME_DECODER_H_
#define NUMTRACE_SHIM_CUPTI_RUNTIME_DECODER_H_

#include <cstdint>
#include <optional>
#include <span>

#include "shim/cupti/launch_decoder.h"
#include "shim/engine/events.h"

namespace numtrace::shim {

// Runtime ids numtrace enables (launches, then allocations).
std::span<const uint32_t> RuntimeWitnessIds();
bool IsRuntimeLaunchId(uint32_t cbid);
bool IsRuntimeAllocId(uint32_t cbid);

struct RuntimeLaunch {
  LaunchArgs args;           // function: the CUkernel, or the host stub
  HandleKind handle = HandleKind::kNone;  // kKernel: args.function is a CUkernel
};

// nullopt for other ids or null structs.
std::optional<RuntimeLaunch> ExtractRuntimeLaunch(uint32_t cbid, const void* function_params);
std::optional<AllocEvent> DecodeRuntimeAlloc(uint32_t cbid, const void* function_params, int device);
std::optional<FreeEvent> DecodeRuntimeFree(uint32_t cbid, const void* function_params);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_RUNTIME_DECODER_H_
