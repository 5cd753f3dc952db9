#include "common/format/dtype.h"

#include <gtest/gtest.h>

namespace numtrace {
namespace {

TEST(DTypeTest, NamesRoundTrip) {
  for (int i = 0; i < kDTypeCount; ++i) {
    DType t = static_cast<DType>(i), back = DType::kRaw;
    ASSERT_TRUE(ParseDType(DTypeName(t), &back)) << DTypeName(t);
    EXPECT_EQ(back, t);
  }
  DType t;
  EXPECT_FALSE(ParseDType("float32", &t));
}

TEST(DTypeTest, SizesMatchTheFormat) {
  EXPECT_EQ(DTypeSize(DType::kBF16), 2);
  EXPECT_EQ(DTypeSize(DType::kF8E4M3), 1);
  EXPECT_EQ(DTypeSize(DType::kI64), 8);
  EXPECT_EQ(DTypeSize(DType::kRaw), 1);
  EXPECT_TRUE(IsFloat(DType::kF8E5M2));
  EXPECT_FALSE(IsFloat(DType::kI8));
}

}  // namespace
}  // namespace numtrace
