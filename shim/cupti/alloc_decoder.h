// File: shim/cupti/alloc_decoder.h
//
// Pure functions from the allocation APIs' parameter structs (read at
// callback EXIT, after a CUDA_SUCCESS) to AllocEvent/FreeEvent. There are no
// resource-domain memory callbacks, so these API callbacks are how numtrace
// learns which device ranges exist. VMM: cuMemMap/cuMemUnmap carry the
// mapped range; cuMemCreate/cuMemRelease/cuMemAddressReserve name no usable
// memory and are ignored.
//
// Example:
//   cuMemAlloc_v2_params p{&dptr, 4096};   // at EXIT *p.dptr holds the address
//   std::optional<AllocEvent> a = DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &p, 0);
//   // a->address == dptr, a->bytes == 4096, a->kind == AllocKind::kPlain
#ifndef NUMTRACE_SHIM_CUPTI_ALLOC_DECODER_H_
#define NUMTRACE_SHIM_CUPTI_ALLOC_DECODER_H_

#include <cstdint>
#include <optional>
#include <span>

#include "shim/engine/events.h"

namespace numtrace::shim {

// The allocation and free ids numtrace enables.
std::span<const uint32_t> AllocCallbackIds();

// nullopt for other ids, null structs or a null returned address.
std::optional<AllocEvent> DecodeAlloc(uint32_t cbid, const void* function_params, int device);
std::optional<FreeEvent> DecodeFree(uint32_t cbid, const void* function_params);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_ALLOC_DECODER_H_
