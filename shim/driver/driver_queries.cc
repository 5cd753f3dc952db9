// File: shim/driver/driver_queries.cc
//
// Driver-backed answers for the callback path; see driver_queries.h.
#include "shim/driver/driver_queries.h"

#include <algorithm>
#include <utility>

#include "shim/driver/driver_api.h"

namespace numtrace::shim {

uint32_t ParamBytes(std::span<const ParamSlot> layout) {
  uint32_t end = 0;
  for (const ParamSlot& s : layout) end = std::max(end, s.offset + s.size);
  return end;
}
namespace {

// CUDA caps a kernel's parameters at 32764 bytes; a loop that never ends
// would mean a broken driver, not a big kernel.
constexpr size_t kMaxParams = 8192;

// Reads the layout; returns the driver's answer for the failing index
// (CUDA_SUCCESS when the layout ended normally).
template <typename Handle, typename InfoFn>
CUresult ReadLayout(InfoFn fn, Handle h, KernelDescription* out) {
  out->layout.clear();
  for (size_t i = 0; i < kMaxParams; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = fn(h, i, &offset, &size);
    // No count API: the first index past the end answers INVALID_VALUE.
    if (r == CUDA_ERROR_INVALID_VALUE) return CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) return r;
    out->layout.push_back({static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
  }
  return CUDA_ERROR_UNKNOWN;
}

}  // namespace

bool LiveDriverQueries::Describe(uint64_t function, HandleKind kind, KernelDescription* out) {
  auto* f = reinterpret_cast<CUfunction>(function);
  auto* k = reinterpret_cast<CUkernel>(function);
  const char* name = nullptr;
  if (kind == HandleKind::kKernel) {
    // Known to be a CUkernel (__cudaLaunchKernel): only the kernel queries
    // are asked. What the function query does with a CUkernel is not
    // settled on hardware, and an empty layout (a kernel without
    // parameters) must not send a CUkernel there either.
    if (api_.cuKernelGetParamInfo == nullptr ||
        ReadLayout(api_.cuKernelGetParamInfo, k, out) != CUDA_SUCCESS) {
      out->layout.clear();
      return false;
    }
    if (api_.cuKernelGetName == nullptr || api_.cuKernelGetName(&name, k) != CUDA_SUCCESS) name = nullptr;
    out->name = name ? name : "";
    out->param_bytes = ParamBytes(out->layout);
    return true;
  }
  // `f` may be a CUkernel cast to CUfunction (cuLaunchKernel accepts both,
  // and the runtime may hand over CUkernel handles). What the function query
  // answers for a kernel handle is not settled on hardware: an error, or
  // INVALID_VALUE at index 0 - which is also how a kernel without parameters
  // answers. So an empty layout asks the kernel query too: a CUkernel then
  // gets its real layout, a true CUfunction is refused by the kernel query
  // (handle-kind error) and keeps its empty one.
  bool ok = ReadLayout(api_.cuFuncGetParamInfo, f, out) == CUDA_SUCCESS;
  bool as_kernel = !ok;
  if (ok && out->layout.empty() && api_.cuKernelGetParamInfo != nullptr) {
    KernelDescription asked;
    if (ReadLayout(api_.cuKernelGetParamInfo, k, &asked) == CUDA_SUCCESS && !asked.layout.empty()) {
      out->layout = std::move(asked.layout);
      as_kernel = true;
    }
  } else if (!ok) {
    ok = ReadLayout(api_.cuKernelGetParamInfo, k, out) == CUDA_SUCCESS;
  }
  if (!ok) {
    out->layout.clear();
    return false;
  }
  CUresult named = as_kernel ? api_.cuKernelGetName(&name, k) : api_.cuFuncGetName(&name, f);
  if (named != CUDA_SUCCESS) name = nullptr;
  out->name = name ? name : "";
  out->param_bytes = ParamBytes(out->layout);
  return true;
}

bool LiveDriverQueries::IsCapturing(uint64_t stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  // An error counts as capturing: the legacy stream answers
  // CUDA_ERROR_STREAM_CAPTURE_IMPLICIT while another stream captures, and
  // enqueuing our work there would invalidate the application's capture.
  if (api_.cuStreamIsCapturing(reinterpret_cast<CUstream>(stream), &status) != CUDA_SUCCESS) {
    return true;
  }
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

int LiveDriverQueries::DeviceOf(uint64_t context) {
  // Hot path: a launch thread keeps using one context, so remember the last.
  thread_local uint64_t last_context = 0;
  thread_local int last_device = 0;
  if (context != 0 && context == last_context) return last_device;
  CUdevice dev = 0;
  CUcontext current = nullptr;
  bool switched = false;
  if (context != 0 && api_.cuCtxGetCurrent(&current) == CUDA_SUCCESS &&
      current != reinterpret_cast<CUcontext>(context)) {
    switched = api_.cuCtxPushCurrent_v2(reinterpret_cast<CUcontext>(context)) == CUDA_SUCCESS;
  }
  if (api_.cuCtxGetDevice(&dev) != CUDA_SUCCESS) dev = 0;
  if (switched) {
    CUcontext popped = nullptr;
    api_.cuCtxPopCurrent_v2(&popped);
  }
  last_context = context;
  last_device = static_cast<int>(dev);
  return last_device;
}

}  // namespace numtrace::shim
