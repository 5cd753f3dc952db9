// File: shim/cupti/alloc_decoder.cc
//
// Decoding of the allocation parameter structs; see alloc_decoder.h.
#include "shim/cupti/alloc_decoder.h"

#include <cuda.h>
#include <cupti.h>

#include <array>

namespace numtrace::shim {
namespace {

constexpr std::array<uint32_t, 13> kIds = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,   // enabled so a later version can pair handles
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,  // with maps; decoded as nothing for now
};

template <typename P>
std::optional<AllocEvent> Returned(const P& p, AllocKind kind, int device) {
  if (p.dptr == nullptr || *p.dptr == 0) return std::nullopt;
  return AllocEvent{static_cast<uint64_t>(*p.dptr), p.bytesize, kind, device};
}

}  // namespace

std::span<const uint32_t> AllocCallbackIds() { return kIds; }

std::optional<AllocEvent> DecodeAlloc(uint32_t cbid, const void* params, int device) {
  if (params == nullptr) return std::nullopt;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
      return Returned(*static_cast<const cuMemAlloc_v2_params*>(params), AllocKind::kPlain, device);
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
      const auto& p = *static_cast<const cuMemAllocPitch_v2_params*>(params);
      if (p.dptr == nullptr || *p.dptr == 0 || p.pPitch == nullptr) return std::nullopt;
      return AllocEvent{static_cast<uint64_t>(*p.dptr), *p.pPitch * p.Height, AllocKind::kPlain,
                        device};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
      return Returned(*static_cast<const cuMemAllocAsync_params*>(params),
                      AllocKind::kStreamOrdered, device);
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
      return Returned(*static_cast<const cuMemAllocAsync_ptsz_params*>(params),
                      AllocKind::kStreamOrdered, device);
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
      return Returned(*static_cast<const cuMemAllocFromPoolAsync_params*>(params),
                      AllocKind::kStreamOrdered, device);
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
      return Returned(*static_cast<const cuMemAllocFromPoolAsync_ptsz_params*>(params),
                      AllocKind::kStreamOrdered, device);
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
      const auto& p = *static_cast<const cuMemMap_params*>(params);
      if (p.ptr == 0) return std::nullopt;
      return AllocEvent{static_cast<uint64_t>(p.ptr), p.size, AllocKind::kVirtualMap, device};
    }
    default:
      return std::nullopt;
  }
}

std::optional<FreeEvent> DecodeFree(uint32_t cbid, const void* params) {
  if (params == nullptr) return std::nullopt;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2: {
      const auto& p = *static_cast<const cuMemFree_v2_params*>(params);
      return FreeEvent{static_cast<uint64_t>(p.dptr), 0, AllocKind::kPlain};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync: {
      const auto& p = *static_cast<const cuMemFreeAsync_params*>(params);
      return FreeEvent{static_cast<uint64_t>(p.dptr), 0, AllocKind::kStreamOrdered};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz: {
      const auto& p = *static_cast<const cuMemFreeAsync_ptsz_params*>(params);
      return FreeEvent{static_cast<uint64_t>(p.dptr), 0, AllocKind::kStreamOrdered};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
      const auto& p = *static_cast<const cuMemUnmap_params*>(params);
      return FreeEvent{static_cast<uint64_t>(p.ptr), p.size, AllocKind::kVirtualMap};
    }
    default:
      return std::nullopt;
  }
}

}  // namespace numtrace::shim
