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
#include <iterator>
#include <string_view>

#include "common/format/enum_list.h"

namespace numtrace {

// ONE list: the enumerators and the words a trace writes (`dtype`). Order
// is part of nothing external (names are what is written), except that the
// floating types come first (IsFloat) and kRaw last (kDTypeCount).
#define NUMTRACE_DTYPES(X)                                                                  \
  X(kF64, "f64") X(kF32, "f32") X(kF16, "f16") X(kBF16, "bf16") X(kF8E4M3, "f8e4m3")         \
  X(kF8E5M2, "f8e5m2") X(kI64, "i64") X(kI32, "i32") X(kI16, "i16") X(kI8, "i8") X(kU8, "u8") \
  X(kBool, "bool")                                                                          \
  X(kRaw, "raw") /* unknown element type: only `n` (bytes) and `hash` are measured */
enum class DType : uint8_t { NUMTRACE_DTYPES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kDTypeNames[] = {NUMTRACE_DTYPES(NUMTRACE_ENUM_NAME)};
inline constexpr int kDTypeCount = static_cast<int>(DType::kRaw) + 1;
static_assert(std::size(kDTypeNames) == kDTypeCount);

// How the dtype was decided; written as `dtype_from`. ONE list.
#define NUMTRACE_DTYPE_SOURCES(X)                                                      \
  X(kName, "name")           /* from the kernel name (template arguments, GEMM tokens) */ \
  X(kSignature, "signature") /* from a compiler signature or a user annotation */       \
  X(kSniffed, "sniffed")     /* guessed from the bytes */                                \
  X(kDefault, "default")     /* nothing known */
enum class DTypeSource : uint8_t { NUMTRACE_DTYPE_SOURCES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kDTypeSourceNames[] = {NUMTRACE_DTYPE_SOURCES(NUMTRACE_ENUM_NAME)};

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
