// File: shim/cupti/nvtx_decoder.h
//
// Turns a CUPTI NVTX-domain callback (CUpti_NvtxData::functionParams, the
// structs of generated_nvtx_meta.h) into a range push or pop for the step
// tracker (NUMTRACE_STEP_MODE=nvtx:REGEX). Handled: nvtxRangePushA/W/Ex,
// nvtxRangePop, nvtxRangeStartA/W/Ex, nvtxRangeEnd. Start/End ranges are
// mapped onto push/pop: the engine tracks one stack, and a training loop
// that marks steps with start/end does not nest them. Wide names (W, or Ex
// with a Unicode message) are converted to UTF-8; a registered-string
// message has no readable name here and pushes "" (so pops still pair).
// Domain ranges (nvtxDomain*) are not decoded: NCCL and cuDNN use their own
// domains and would be mistaken for steps.
//
// Example:
//   if (std::optional<NvtxRange> r = DecodeNvtxRange(cbid, nvtx.functionParams)) {
//     r->push ? sink->OnRangePush(r->name) : sink->OnRangePop();
//   }
#ifndef NUMTRACE_SHIM_CUPTI_NVTX_DECODER_H_
#define NUMTRACE_SHIM_CUPTI_NVTX_DECODER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace numtrace::shim {

struct NvtxRange {
  bool push = false;  // false: a pop / end
  std::string name;   // UTF-8; empty for pops
};

// nullopt for ids that are not range calls or null parameters.
std::optional<NvtxRange> DecodeNvtxRange(uint32_t cbid, const void* params);

// The NVTX callback ids to enable.
std::span<const uint32_t> NvtxRangeIds();

// UTF-32 (Linux wchar_t) to UTF-8; invalid code points become U+FFFD.
std::string WideToUtf8(const wchar_t* text);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_NVTX_DECODER_H_
