// File: common/format/dtype.h
//
// The element types of trace format v1 (`dtype` of a buffer) and how a dtype
// was decided (`dtype_from`). Shared by the shim, which writes them, and the
// analyzer, which reads them. Plain C++ with no dependencies, so CUDA code
// may include it too.
//
// Example:
//   DType t;
//   ParseDType("bf16", &t);      // true, t == DType::kBF16
//   DTypeName(DType::kF8E4M3);   // "f8e4m3"
//   DTypeSize(DType::kBF16);     // 2
#ifndef NUMTRACE_COMMON_FORMAT_DTYPE_H_
#define NUMTRACE_COMMON_FORMAT_DTYPE_H_

#include <cstdint>
#include <string_view>

namespace numtrace {

// Order is part of nothing external (names are what is written); keep kRaw
// last so loops can use kCount.
enum class DType : uint8_t {
  kF64, kF32, kF16, kBF16, kF8E4M3, kF8E5M2,
  kI64, kI32, kI16, kI8, kU8, kBool,
  kRaw,  // unknown element type: only `n` (bytes) and `hash` are measured
};
inline constexpr int kDTypeCount = static_cast<int>(DType::kRaw) + 1;

// How the dtype was decided; written as `dtype_from`.
enum class DTypeSource : uint8_t {
  kName,       // "name": from the kernel name (template arguments, GEMM tokens)
  kSignature,  // "signature": from a compiler signature or a user annotation
  kSniffed,    // "sniffed": guessed from the bytes
  kDefault,    // "default": nothing known
};

// Bytes per element; 1 for kRaw (n counts bytes).
constexpr int DTypeSize(DType t) {
  switch (t) {
    case DType::kF64: case DType::kI64: return 8;
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: return 2;
    default: return 1;
  }
}
constexpr bool IsFloat(DType t) { return t <= DType::kF8E5M2; }

std::string_view DTypeName(DType t);
[[nodiscard]] bool ParseDType(std::string_view s, DType* out);
std::string_view DTypeSourceName(DTypeSource s);
[[nodiscard]] bool ParseDTypeSource(std::string_view s, DTypeSource* out);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_DTYPE_H_
