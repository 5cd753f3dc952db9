// File: test/shim/reduce/element_decode_test.cc
// Decoding of every bit pattern of the 8/16-bit floats against the ldexp
// reference, and fixed points of every format.
#include "common/numeric/element_decode.h"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "test/shim/reduce/reduce_test_util.h"

namespace numtrace::shim {
namespace {

using testing::RefClass;
using testing::RefDecode;

ElementClass ToClass(RefClass c) {
  switch (c) {
    case RefClass::kNormal: return ElementClass::kNormal;
    case RefClass::kZero: return ElementClass::kZero;
    case RefClass::kSub: return ElementClass::kSubnormal;
    case RefClass::kNaN: return ElementClass::kNaN;
    case RefClass::kInf: return ElementClass::kPosInf;
    case RefClass::kNInf: return ElementClass::kNegInf;
  }
  return ElementClass::kNormal;
}

Element Decode(uint64_t bits, DType t) {
  uint8_t b[8];
  std::memcpy(b, &bits, 8);
  return DecodeElement(b, t);
}

TEST(ElementDecode, EverySmallFloatPatternMatchesReference) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF8E5M2}) {
    const uint64_t count = uint64_t{1} << (8 * DTypeSize(t));
    for (uint64_t b = 0; b < count; ++b) {
      uint8_t bytes[8] = {static_cast<uint8_t>(b), static_cast<uint8_t>(b >> 8)};
      const Element e = DecodeElement(bytes, t);
      const testing::RefElement r = RefDecode(bytes, t);
      ASSERT_EQ(e.cls, ToClass(r.cls)) << DTypeName(t) << " bits " << b;
      if (r.cls != RefClass::kNaN && r.cls != RefClass::kInf && r.cls != RefClass::kNInf) {
        ASSERT_EQ(testing::Bits(e.value), testing::Bits(r.value)) << DTypeName(t) << " bits " << b;
      }
    }
  }
}

TEST(ElementDecode, KnownValues) {
  EXPECT_EQ(Decode(0x3c00, DType::kF16).value, 1.0);
  EXPECT_EQ(Decode(0x7bff, DType::kF16).value, 65504.0);
  EXPECT_EQ(Decode(0x0001, DType::kF16).value, std::ldexp(1.0, -24));
  EXPECT_EQ(Decode(0x0001, DType::kF16).cls, ElementClass::kSubnormal);
  EXPECT_EQ(Decode(0x3f80, DType::kBF16).value, 1.0);
  EXPECT_EQ(Decode(0xc0490fdb, DType::kF32).value, static_cast<double>(-3.14159274101257324f));
  EXPECT_EQ(Decode(0x7e, DType::kF8E4M3).value, 448.0);
  EXPECT_EQ(Decode(0x01, DType::kF8E4M3).value, std::ldexp(1.0, -9));
  EXPECT_EQ(Decode(0x78, DType::kF8E4M3).value, 256.0);  // E4M3 has no Inf: 0x78 is finite
  EXPECT_EQ(Decode(0x7f, DType::kF8E4M3).cls, ElementClass::kNaN);
  EXPECT_EQ(Decode(0xff, DType::kF8E4M3).cls, ElementClass::kNaN);
  EXPECT_EQ(Decode(0x7b, DType::kF8E5M2).value, 57344.0);
  EXPECT_EQ(Decode(0x7c, DType::kF8E5M2).cls, ElementClass::kPosInf);
  EXPECT_EQ(Decode(0xfc, DType::kF8E5M2).cls, ElementClass::kNegInf);
  EXPECT_EQ(Decode(0x01, DType::kF8E5M2).value, std::ldexp(1.0, -16));
  EXPECT_EQ(Decode(0x8000, DType::kF16).cls, ElementClass::kZero);
  EXPECT_TRUE(std::signbit(Decode(0x8000, DType::kF16).value));
  EXPECT_EQ(Decode(0x00000001, DType::kF32).cls, ElementClass::kSubnormal);
  EXPECT_EQ(Decode(0x00000001, DType::kF32).value, std::ldexp(1.0, -149));
  EXPECT_EQ(Decode(1, DType::kF64).cls, ElementClass::kSubnormal);
  EXPECT_EQ(Decode(0x7ff0000000000001, DType::kF64).cls, ElementClass::kNaN);
}

TEST(ElementDecode, Integers) {
  EXPECT_EQ(Decode(0xff, DType::kI8).value, -1.0);
  EXPECT_EQ(Decode(0xff, DType::kU8).value, 255.0);
  EXPECT_EQ(Decode(0x8000, DType::kI16).value, -32768.0);
  EXPECT_EQ(Decode(0x80000000, DType::kI32).value, -2147483648.0);
  EXPECT_EQ(Decode(0x8000000000000000, DType::kI64).value, -9223372036854775808.0);
  // 2^53 + 1 is not a double: round to nearest even gives 2^53.
  EXPECT_EQ(Decode((uint64_t{1} << 53) + 1, DType::kI64).value, 9007199254740992.0);
  EXPECT_EQ(Decode(0x02, DType::kBool).value, 1.0);
  EXPECT_EQ(Decode(0x00, DType::kBool).cls, ElementClass::kZero);
  EXPECT_EQ(Decode(0, DType::kI32).cls, ElementClass::kZero);
  EXPECT_EQ(Decode(7, DType::kI32).cls, ElementClass::kNormal);
}

}  // namespace
}  // namespace numtrace::shim
