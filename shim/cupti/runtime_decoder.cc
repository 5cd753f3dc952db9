// File: shim/cupti/runtime_decoder.cc
//
// Runtime witness ids and fallback decoding; see runtime_decoder.h.
#include "shim/cupti/runtime_decoder.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

namespace numtrace::shim {

// Mirrors __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t,
// cudaStream_t) (crt/device_functions.h); CUPTI passes a struct of the
// call's arguments in declaration order, like its generated ones.
struct RuntimeLaunchKernelParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

namespace {

constexpr uint32_t kLaunchIds[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};
constexpr uint32_t kAllocIds[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
};
constexpr uint32_t kAllIds[] = {
    kLaunchIds[0], kLaunchIds[1], kLaunchIds[2], kLaunchIds[3], kLaunchIds[4], kLaunchIds[5],
    kLaunchIds[6], kLaunchIds[7], kAllocIds[0],  kAllocIds[1],  kAllocIds[2],  kAllocIds[3],
    kAllocIds[4],  kAllocIds[5],  kAllocIds[6],  kAllocIds[7],
    // Not a witness: a pool trim unmaps freed pool memory without any free
    // callback (PyTorch's empty_cache under cudaMallocAsync).
    CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020,
};

uint64_t Handle(const void* p) { return reinterpret_cast<uint64_t>(p); }

bool PerThread(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
      return true;
    default:
      return false;
  }
}

// The classic (func, gridDim, blockDim, args, sharedMem, stream) shape.
template <typename P>
LaunchArgs FromClassic(const P& p, uint64_t function) {
  LaunchArgs a;
  a.function = function;
  a.grid = {p.gridDim.x, p.gridDim.y, p.gridDim.z};
  a.block = {p.blockDim.x, p.blockDim.y, p.blockDim.z};
  a.raw_stream = Handle(p.stream);
  a.kernel_params = p.args;
  return a;
}

// Launch geometry any real launch has: 1..1024 threads a block, no zero
// grid dimension.
bool Plausible(const dim3& grid, const dim3& block) {
  uint64_t threads = uint64_t{block.x} * block.y * block.z;
  return grid.x > 0 && grid.y > 0 && grid.z > 0 && threads > 0 && threads <= 1024;
}

}  // namespace

std::span<const uint32_t> RuntimeWitnessIds() { return kAllIds; }

bool IsRuntimeLaunchId(uint32_t cbid) {
  for (uint32_t id : kLaunchIds) {
    if (id == cbid) return true;
  }
  return false;
}

bool IsRuntimeAllocId(uint32_t cbid) {
  for (uint32_t id : kAllocIds) {
    if (id == cbid) return true;
  }
  return false;
}

std::optional<RuntimeLaunch> ExtractRuntimeLaunch(uint32_t cbid, const void* params) {
  if (params == nullptr) return std::nullopt;
  RuntimeLaunch l;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: {
      const auto& p = *static_cast<const cudaLaunchKernel_v7000_params*>(params);
      l.args = FromClassic(p, Handle(p.func));
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
      const auto& p = *static_cast<const cudaLaunchKernel_ptsz_v7000_params*>(params);
      l.args = FromClassic(p, Handle(p.func));
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000: {
      const auto& p = *static_cast<const cudaLaunchCooperativeKernel_v9000_params*>(params);
      l.args = FromClassic(p, Handle(p.func));
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
      const auto& p = *static_cast<const cudaLaunchCooperativeKernel_ptsz_v9000_params*>(params);
      l.args = FromClassic(p, Handle(p.func));
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      // Both structs are (config, func, args).
      const auto& p = *static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
      if (p.config == nullptr) return std::nullopt;
      const cudaLaunchConfig_t& c = *p.config;
      l.args.function = Handle(p.func);
      l.args.grid = {c.gridDim.x, c.gridDim.y, c.gridDim.z};
      l.args.block = {c.blockDim.x, c.blockDim.y, c.blockDim.z};
      l.args.raw_stream = Handle(c.stream);
      l.args.kernel_params = p.args;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
      // Our own mirror of an undocumented struct: refuse values no launch
      // can have rather than hand the driver a misread handle.
      const auto& p = *static_cast<const RuntimeLaunchKernelParams*>(params);
      if (!Plausible(p.gridDim, p.blockDim)) return std::nullopt;
      l.args = FromClassic(p, Handle(p.kernel));
      l.handle = p.kernel != nullptr ? HandleKind::kKernel : HandleKind::kNone;
      break;
    }
    default:
      return std::nullopt;
  }
  l.args.per_thread = PerThread(cbid);
  return l;
}

std::optional<AllocEvent> DecodeRuntimeAlloc(uint32_t cbid, const void* params, int device) {
  if (params == nullptr) return std::nullopt;
  AllocEvent a;
  a.device = device;
  void** out = nullptr;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
      const auto& p = *static_cast<const cudaMalloc_v3020_params*>(params);
      out = p.devPtr;
      a.bytes = p.size;
      a.kind = AllocKind::kPlain;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
      const auto& p = *static_cast<const cudaMallocAsync_v11020_params*>(params);
      out = p.devPtr;
      a.bytes = p.size;
      a.kind = AllocKind::kStreamOrdered;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: {
      const auto& p = *static_cast<const cudaMallocFromPoolAsync_v11020_params*>(params);
      out = p.ptr;
      a.bytes = p.size;
      a.kind = AllocKind::kStreamOrdered;
      break;
    }
    default:
      return std::nullopt;
  }
  if (out == nullptr || *out == nullptr) return std::nullopt;
  a.address = Handle(*out);
  return a;
}

std::optional<FreeEvent> DecodeRuntimeFree(uint32_t cbid, const void* params) {
  if (params == nullptr) return std::nullopt;
  FreeEvent f;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
      f.address = Handle(static_cast<const cudaFree_v3020_params*>(params)->devPtr);
      f.kind = AllocKind::kPlain;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
      f.address = Handle(static_cast<const cudaFreeAsync_v11020_params*>(params)->devPtr);
      f.kind = AllocKind::kStreamOrdered;
      break;
    default:
      return std::nullopt;
  }
  if (f.address == 0) return std::nullopt;
  return f;
}

}  // namespace numtrace::shim
