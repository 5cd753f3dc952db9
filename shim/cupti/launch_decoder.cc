// File: shim/cupti/launch_decoder.cc
//
// Decoding of the launch parameter structs; see launch_decoder.h.
#include "shim/cupti/launch_decoder.h"

#include <cuda.h>
#include <cupti.h>

#include <algorithm>
#include <cstring>

namespace numtrace::shim {
namespace {

uint64_t Handle(const void* p) { return reinterpret_cast<uint64_t>(p); }

// The plain and _ptsz structs of one API have the same layout; one template
// reads both.
template <typename P>
LaunchArgs FromClassic(const P& p) {
  LaunchArgs a;
  a.function = Handle(p.f);
  a.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
  a.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
  a.raw_stream = Handle(p.hStream);
  a.kernel_params = p.kernelParams;
  if constexpr (requires { p.extra; }) a.extra = p.extra;
  return a;
}

template <typename P>
std::optional<LaunchArgs> FromEx(const P& p) {
  if (p.config == nullptr) return std::nullopt;
  const CUlaunchConfig& c = *p.config;
  LaunchArgs a;
  a.function = Handle(p.f);
  a.grid = {c.gridDimX, c.gridDimY, c.gridDimZ};
  a.block = {c.blockDimX, c.blockDimY, c.blockDimZ};
  a.raw_stream = Handle(c.hStream);
  a.kernel_params = p.kernelParams;
  a.extra = p.extra;
  return a;
}

// The packed buffer and its size from an `extra` array; the list ends at
// CU_LAUNCH_PARAM_END (or NULL, which is the same value).
bool ReadExtra(void** extra, const uint8_t** buffer, size_t* size) {
  *buffer = nullptr;
  *size = 0;
  bool have_size = false;
  for (int i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      *buffer = static_cast<const uint8_t*>(extra[i + 1]);
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != nullptr) {
      *size = *static_cast<const size_t*>(extra[i + 1]);
      have_size = true;
    }
  }
  return *buffer != nullptr && have_size;
}

}  // namespace

bool IsKernelLaunchId(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

bool IsPerThreadId(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
      return true;
    default:
      return false;
  }
}

std::optional<LaunchArgs> ExtractLaunchArgs(uint32_t cbid, const void* params) {
  if (params == nullptr) return std::nullopt;
  std::optional<LaunchArgs> a;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      a = FromClassic(*static_cast<const cuLaunchKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      a = FromClassic(*static_cast<const cuLaunchKernel_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      a = FromClassic(*static_cast<const cuLaunchCooperativeKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      a = FromClassic(*static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      a = FromEx(*static_cast<const cuLaunchKernelEx_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      a = FromEx(*static_cast<const cuLaunchKernelEx_ptsz_params*>(params));
      break;
    default:
      return std::nullopt;
  }
  if (a) a->per_thread = IsPerThreadId(cbid);
  return a;
}

std::optional<GraphLaunchEvent> ExtractGraphLaunch(uint32_t cbid, const void* params) {
  if (params == nullptr) return std::nullopt;
  GraphLaunchEvent g;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) {
    const auto& p = *static_cast<const cuGraphLaunch_params*>(params);
    g.graph_exec = Handle(p.hGraph);
    g.stream = ResolveStream(Handle(p.hStream), false);
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) {
    const auto& p = *static_cast<const cuGraphLaunch_ptsz_params*>(params);
    g.graph_exec = Handle(p.hGraphExec);
    g.stream = ResolveStream(Handle(p.hStream), true);
  } else {
    return std::nullopt;
  }
  return g;
}

uint64_t ResolveStream(uint64_t raw_stream, bool per_thread) {
  if (raw_stream != 0) return raw_stream;
  return per_thread ? Handle(CU_STREAM_PER_THREAD) : Handle(CU_STREAM_LEGACY);
}

PackResult PackParams(const LaunchArgs& args, std::span<const ParamSlot> layout,
                      std::span<uint8_t> out, uint32_t* valid_bytes) {
  uint32_t total = ParamBytes(layout);
  if (valid_bytes != nullptr) *valid_bytes = 0;
  if (out.size() < total) return PackResult::kFailed;
  std::fill(out.begin(), out.begin() + total, uint8_t{0});
  if (valid_bytes != nullptr) *valid_bytes = total;
  if (layout.empty()) return PackResult::kOk;
  if (args.kernel_params != nullptr) {
    for (size_t i = 0; i < layout.size(); ++i) {
      const void* src = args.kernel_params[i];
      if (src == nullptr) return PackResult::kFailed;
      std::memcpy(out.data() + layout[i].offset, src, layout[i].size);
    }
    return PackResult::kOk;
  }
  const uint8_t* buffer = nullptr;
  size_t size = 0;
  if (args.extra == nullptr || !ReadExtra(args.extra, &buffer, &size)) return PackResult::kFailed;
  if (size >= total) {
    std::memcpy(out.data(), buffer, total);
    return PackResult::kOk;
  }
  // Shorter than the layout (NCCL): keep what the caller passed.
  std::memcpy(out.data(), buffer, size);
  if (valid_bytes != nullptr) *valid_bytes = static_cast<uint32_t>(size);
  return PackResult::kShort;
}

LaunchEvent MakeLaunchEvent(const LaunchArgs& args, const KernelDescription& info, const char* symbol,
                            std::span<const uint8_t> packed, uint64_t context, int device,
                            bool capturing) {
  LaunchEvent e;
  e.symbol = (symbol != nullptr && symbol[0] != '\0') ? std::string_view(symbol)
                                                      : std::string_view(info.name);
  e.function = args.function;
  e.params = packed;
  e.layout = info.layout;
  e.grid = args.grid;
  e.block = args.block;
  e.stream = ResolveStream(args.raw_stream, args.per_thread);
  e.context = context;
  e.device = device;
  e.stream_capturing = capturing;
  return e;
}

}  // namespace numtrace::shim
