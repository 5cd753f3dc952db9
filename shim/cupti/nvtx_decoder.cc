// File: shim/cupti/nvtx_decoder.cc
//
// NVTX range callbacks to push/pop; see nvtx_decoder.h.
#include "shim/cupti/nvtx_decoder.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>

namespace numtrace::shim {
namespace {

constexpr uint32_t kIds[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA,  CUPTI_CBID_NVTX_nvtxRangePushW,
    CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
    CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW,
    CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
};

// Names are step labels: cap them so a pathological message costs little.
constexpr size_t kMaxName = 1024;

std::string Ascii(const char* s) {
  if (s == nullptr) return {};
  std::string out;
  for (size_t i = 0; s[i] != '\0' && i < kMaxName; ++i) out.push_back(s[i]);
  return out;
}

std::string FromAttributes(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return Ascii(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE: return WideToUtf8(a->message.unicode);
    default: return {};  // registered handle or no message
  }
}

template <typename P>
const P& As(const void* p) { return *static_cast<const P*>(p); }

}  // namespace

std::string WideToUtf8(const wchar_t* text) {
  std::string out;
  if (text == nullptr) return out;
  for (size_t i = 0; text[i] != L'\0' && out.size() < kMaxName; ++i) {
    auto c = static_cast<uint32_t>(text[i]);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::span<const uint32_t> NvtxRangeIds() { return kIds; }

std::optional<NvtxRange> DecodeNvtxRange(uint32_t cbid, const void* params) {
  // nvtxRangePop's params struct is a dummy: a pop needs none.
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePop) return NvtxRange{false, {}};
  if (params == nullptr) return std::nullopt;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      return NvtxRange{true, Ascii(As<nvtxRangePushA_params>(params).message)};
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      return NvtxRange{true, WideToUtf8(As<nvtxRangePushW_params>(params).message)};
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return NvtxRange{true, FromAttributes(As<nvtxRangePushEx_params>(params).eventAttrib)};
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      return NvtxRange{true, Ascii(As<nvtxRangeStartA_params>(params).message)};
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      return NvtxRange{true, WideToUtf8(As<nvtxRangeStartW_params>(params).message)};
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return NvtxRange{true, FromAttributes(As<nvtxRangeStartEx_params>(params).eventAttrib)};
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      return NvtxRange{false, {}};
    default:
      return std::nullopt;
  }
}

}  // namespace numtrace::shim
