// File: common/numeric/element_decode.h
//
// Decodes one element of any trace dtype from its raw little-endian bytes
// into an exact double plus its class (NaN, +Inf, -Inf, zero, subnormal,
// normal), with bit manipulation only: no cuda_fp16, no host half types, so
// g++ and nvcc decode every bit pattern identically.
//
// Formats: f16 = IEEE binary16 (1.5.10, bias 15); bf16 = 1.8.7 (bias 127);
// f8e4m3 = OCP E4M3FN (1.4.3, bias 7, no infinities, NaN = S.1111.111,
// max 448); f8e5m2 = IEEE-like 1.5.2 (bias 15, with Inf and NaN).
// Integers and bool are finite; only 0 is special (counted as zero). bool is
// 1.0 for any nonzero byte. i64 beyond 2^53 rounds to nearest even (the only
// inexact conversion).
//
// Example:
//   uint8_t b[2] = {0x00, 0x3c};
//   Element e = DecodeElement(b, DType::kF16);  // e.value == 1.0, e.cls == kNormal
#ifndef NUMTRACE_COMMON_NUMERIC_ELEMENT_DECODE_H_
#define NUMTRACE_COMMON_NUMERIC_ELEMENT_DECODE_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/numeric/hd.h"

namespace numtrace {

enum class ElementClass : uint8_t { kNormal, kZero, kSubnormal, kNaN, kPosInf, kNegInf };

struct Element {
  double value;  // meaningful only for kNormal, kZero and kSubnormal
  ElementClass cls;
};

// Bytes per element, usable in device code (DTypeSize is host constexpr).
NT_HD constexpr int ElementSize(DType t) {
  switch (t) {
    case DType::kF64: case DType::kI64: return 8;
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: return 2;
    default: return 1;
  }
}

// A float of at most 16 bits: sign, `ebits` exponent and `mbits` mantissa
// bits. Normals are rebuilt as double bits; subnormals are m * 2^(1-bias-mbits),
// an exact product of an integer and a power of two.
NT_HD inline Element DecodeSmallFloat(uint32_t bits, int ebits, int mbits, int bias,
                                      bool has_inf) {
  const uint32_t mant = bits & ((1u << mbits) - 1);
  const uint32_t exp = (bits >> mbits) & ((1u << ebits) - 1);
  const bool neg = (bits >> (ebits + mbits)) & 1u;
  const uint32_t exp_max = (1u << ebits) - 1;
  const uint64_t sign = static_cast<uint64_t>(neg) << 63;
  if (has_inf && exp == exp_max) {
    if (mant != 0) return {0.0, ElementClass::kNaN};
    return {0.0, neg ? ElementClass::kNegInf : ElementClass::kPosInf};
  }
  if (!has_inf && exp == exp_max && mant == (1u << mbits) - 1) {
    return {0.0, ElementClass::kNaN};  // E4M3FN: only S.1111.111 is NaN
  }
  if (exp == 0) {
    if (mant == 0) return {NtBitsToDouble(sign), ElementClass::kZero};
    const uint64_t scale_exp = static_cast<uint64_t>(1 - bias - mbits + 1023);
    const double v = NtMul(static_cast<double>(mant), NtBitsToDouble(scale_exp << 52));
    return {neg ? -v : v, ElementClass::kSubnormal};
  }
  const uint64_t dexp = static_cast<uint64_t>(static_cast<int>(exp) - bias + 1023);
  const uint64_t dbits = sign | (dexp << 52) | (static_cast<uint64_t>(mant) << (52 - mbits));
  return {NtBitsToDouble(dbits), ElementClass::kNormal};
}

NT_HD inline Element DecodeF64(uint64_t bits) {
  const uint64_t exp = (bits >> 52) & 0x7ff;
  const uint64_t mant = bits & ((uint64_t{1} << 52) - 1);
  const bool neg = bits >> 63;
  if (exp == 0x7ff) {
    if (mant != 0) return {0.0, ElementClass::kNaN};
    return {0.0, neg ? ElementClass::kNegInf : ElementClass::kPosInf};
  }
  const double v = NtBitsToDouble(bits);
  if (exp == 0) return {v, mant == 0 ? ElementClass::kZero : ElementClass::kSubnormal};
  return {v, ElementClass::kNormal};
}

NT_HD inline Element DecodeF32(uint32_t bits) {
  const uint32_t exp = (bits >> 23) & 0xff;
  const uint32_t mant = bits & 0x7fffff;
  const bool neg = bits >> 31;
  if (exp == 0xff) {
    if (mant != 0) return {0.0, ElementClass::kNaN};
    return {0.0, neg ? ElementClass::kNegInf : ElementClass::kPosInf};
  }
  const double v = static_cast<double>(NtBitsToFloat(bits));  // exact widening
  if (exp == 0) return {v, mant == 0 ? ElementClass::kZero : ElementClass::kSubnormal};
  return {v, ElementClass::kNormal};
}

NT_HD inline Element IntegerElement(double v) {
  return {v, v == 0.0 ? ElementClass::kZero : ElementClass::kNormal};
}

// Decodes the element at `p` (ElementSize(t) bytes). Not for DType::kRaw.
NT_HD inline Element DecodeElement(const uint8_t* p, DType t) {
  const uint64_t raw = NtLoadLE(p, ElementSize(t));
  switch (t) {
    case DType::kF64: return DecodeF64(raw);
    case DType::kF32: return DecodeF32(static_cast<uint32_t>(raw));
    case DType::kF16: return DecodeSmallFloat(static_cast<uint32_t>(raw), 5, 10, 15, true);
    case DType::kBF16: return DecodeSmallFloat(static_cast<uint32_t>(raw), 8, 7, 127, true);
    case DType::kF8E4M3: return DecodeSmallFloat(static_cast<uint32_t>(raw), 4, 3, 7, false);
    case DType::kF8E5M2: return DecodeSmallFloat(static_cast<uint32_t>(raw), 5, 2, 15, true);
    case DType::kI64: return IntegerElement(NtI64ToDouble(static_cast<int64_t>(raw)));
    case DType::kI32: return IntegerElement(static_cast<double>(static_cast<int32_t>(raw)));
    case DType::kI16: return IntegerElement(static_cast<double>(static_cast<int16_t>(raw)));
    case DType::kI8: return IntegerElement(static_cast<double>(static_cast<int8_t>(raw)));
    case DType::kU8: return IntegerElement(static_cast<double>(raw));
    case DType::kBool: return IntegerElement(raw != 0 ? 1.0 : 0.0);
    default: return {0.0, ElementClass::kZero};
  }
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_NUMERIC_ELEMENT_DECODE_H_
