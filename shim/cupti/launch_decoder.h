// File: shim/cupti/launch_decoder.h
//
// Pure functions from a launch callback's parameter struct
// (generated_cuda_meta.h: cuLaunchKernel_params, cuLaunchKernelEx_params,
// cuLaunchCooperativeKernel_params, cuGraphLaunch_params and their _ptsz
// twins) to the plain LaunchEvent the engine takes. No driver call happens
// here: the kernel's name and parameter layout come in as a KernelDescription, so
// tests build fake callback data from the real structs without a GPU.
//
// Example:
//   cuLaunchKernel_params p{...};
//   std::optional<LaunchArgs> args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p);
//   std::vector<uint8_t> bytes(info.param_bytes);
//   if (args && PackParams(*args, info.layout, bytes))
//     LaunchEvent e = MakeLaunchEvent(*args, info, symbol, bytes, ctx, dev, false);
#ifndef NUMTRACE_SHIM_CUPTI_LAUNCH_DECODER_H_
#define NUMTRACE_SHIM_CUPTI_LAUNCH_DECODER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shim/driver/driver_queries.h"  // KernelDescription, HandleKind
#include "shim/engine/events.h"

namespace numtrace::shim {

// A launch's arguments, whichever of the launch APIs made it.
struct LaunchArgs {
  uint64_t function = 0;  // CUfunction, or a CUkernel cast to one
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint64_t raw_stream = 0;  // as passed: may be NULL, 0x1 or 0x2
  void** kernel_params = nullptr;
  void** extra = nullptr;
  bool per_thread = false;  // a _ptsz callback id
};

// Launch ids numtrace handles (cuLaunchKernel, Ex, Cooperative; plain and
// _ptsz). Graph launches are separate: ExtractGraphLaunch.
bool IsKernelLaunchId(uint32_t cbid);
bool IsPerThreadId(uint32_t cbid);

// nullopt for ids that are not kernel launches or null parameter structs.
std::optional<LaunchArgs> ExtractLaunchArgs(uint32_t cbid, const void* function_params);
std::optional<GraphLaunchEvent> ExtractGraphLaunch(uint32_t cbid, const void* function_params);

// NULL means the legacy stream for plain ids and the per-thread stream for
// _ptsz ids; explicit handles (including 0x1/0x2) pass through.
uint64_t ResolveStream(uint64_t raw_stream, bool per_thread);

// Copies the parameter bytes to their layout offsets in `out` (at least
// ParamBytes(layout) long; gaps zeroed). kernelParams is an array of
// pointers, one per parameter; `extra` holds one packed buffer
// (CU_LAUNCH_PARAM_BUFFER_POINTER/_SIZE) already at the layout's offsets.
// NCCL passes an `extra` buffer shorter than the kernel's full layout (its
// kernels take one 4,096-byte ncclDevKernelArgs4K parameter and pass only
// kernelArgsSize bytes of it): what is there is copied and kShort returned,
// with `*valid_bytes` saying how much. The caller keeps the whole layout
// and hands on only the valid bytes (a slot is scanned up to where they
// end). kFailed when neither is usable.
enum class PackResult : uint8_t { kOk, kShort, kFailed };
PackResult PackParams(const LaunchArgs& args, std::span<const ParamSlot> layout,
                      std::span<uint8_t> out, uint32_t* valid_bytes = nullptr);

// `symbol` (the callback's symbolName) wins over info.name when non-empty.
// The event borrows `symbol`, `info` and `packed`.
LaunchEvent MakeLaunchEvent(const LaunchArgs& args, const KernelDescription& info, const char* symbol,
                            std::span<const uint8_t> packed, uint64_t context, int device,
                            bool capturing);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_LAUNCH_DECODER_H_
