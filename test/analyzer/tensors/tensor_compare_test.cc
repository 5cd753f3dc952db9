// Element comparison: counts, errors with index and values, ULP buckets for
// every float format, cosine, NaN/Inf positions, where mismatches lie.
#include "analyzer/tensors/tensor_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "test/analyzer/tensors/dump_files.h"

namespace numtrace::analyzer {
namespace {

using numtrace::testing::BytesOf;

float Ulps(float x, int n) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b += n;
  std::memcpy(&x, &b, 4);
  return x;
}

TEST(TensorCompareTest, NamesPlantedElementsWithValuesAndUlps) {
  std::vector<float> a(1000), b;
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f + static_cast<float>(i) / 7.0f;
  b = a;
  b[10] = Ulps(a[10], 1);
  b[500] = Ulps(a[500], 3);
  b[900] = Ulps(a[900], 300);
  b[901] = -a[901];
  BufferComparison c = CompareElements(BytesOf(a), BytesOf(b), DType::kF32, {1e-5, 0});
  EXPECT_EQ(c.n, 1000u);
  EXPECT_EQ(c.equal, 996u);
  // 1 and 3 ULPs are within 1e-5 relative; 300 ULPs (~2.3e-5) and the sign flip are not.
  EXPECT_EQ(c.mismatched, 2u);
  ASSERT_TRUE(c.first_mismatch);
  EXPECT_EQ(c.first_mismatch->index, 900u);
  EXPECT_EQ(c.first_mismatch->a, a[900]);
  EXPECT_EQ(c.first_mismatch->b, b[900]);
  ASSERT_TRUE(c.max_abs);
  EXPECT_EQ(c.max_abs->index, 901u);
  EXPECT_DOUBLE_EQ(c.max_abs_value, 2.0 * a[901]);
  ASSERT_TRUE(c.max_rel);
  EXPECT_EQ(c.max_rel->index, 901u);
  EXPECT_DOUBLE_EQ(c.max_rel_value, 2.0);
  EXPECT_EQ(c.ulp[0], 996u);
  EXPECT_EQ(c.ulp[1], 1u);   // "1"
  EXPECT_EQ(c.ulp[2], 1u);   // "2-3"
  EXPECT_EQ(c.ulp[5], 2u);   // ">255": 300 and the sign flip
  EXPECT_EQ(c.strip[90], 2u);  // 900 and 901 lie in the 91st hundredth
  EXPECT_LT(c.cosine, 1.0);
  EXPECT_GT(c.cosine, 0.99);
}

TEST(TensorCompareTest, ToleranceDecidesMismatches) {
  std::vector<double> a = {1.0, 2.0, 0.0}, b = {1.0 + 1e-6, 2.0, 1e-9};
  EXPECT_EQ(CompareElements(BytesOf(a), BytesOf(b), DType::kF64, {1e-5, 0}).mismatched, 1u);  // 0 vs 1e-9
  EXPECT_EQ(CompareElements(BytesOf(a), BytesOf(b), DType::kF64, {1e-5, 1e-8}).mismatched, 0u);
  EXPECT_EQ(CompareElements(BytesOf(a), BytesOf(b), DType::kF64, {0, 0}).mismatched, 2u);
}

TEST(TensorCompareTest, NonfinitePositionsAndCountsPerSide) {
  const float nan = std::nanf(""), inf = INFINITY;
  std::vector<float> a = {1, nan, 3, inf, 5, nan}, b = {1, nan, nan, inf, -inf, 6};
  BufferComparison c = CompareElements(BytesOf(a), BytesOf(b), DType::kF32, {1e-5, 0});
  EXPECT_EQ(c.nonfinite_a.nan, 2u);
  EXPECT_EQ(c.nonfinite_a.inf, 1u);
  EXPECT_EQ(c.nonfinite_a.first_indices, (std::vector<uint64_t>{1, 3, 5}));
  EXPECT_EQ(c.nonfinite_b.nan, 2u);
  EXPECT_EQ(c.nonfinite_b.inf, 2u);
  EXPECT_EQ(c.nonfinite_b.first_indices, (std::vector<uint64_t>{1, 2, 3, 4}));
  // Two NaNs match; Inf == Inf matches; 3 vs NaN, 5 vs -Inf, NaN vs 6 do not.
  EXPECT_EQ(c.mismatched, 3u);
  EXPECT_EQ(c.first_mismatch->index, 2u);
}

TEST(TensorCompareTest, UlpDistanceForEverySmallFloatFormat) {
  // bf16 1.0 = 0x3f80; f16 1.0 = 0x3c00; f8e4m3 1.0 = 0x38; f8e5m2 1.0 = 0x3c.
  EXPECT_EQ(UlpDistance(0x3f80, 0x3f82, DType::kBF16), 2u);
  EXPECT_EQ(UlpDistance(0x3c00, 0x3bff, DType::kF16), 1u);
  EXPECT_EQ(UlpDistance(0x38, 0x3a, DType::kF8E4M3), 2u);
  EXPECT_EQ(UlpDistance(0x3c, 0x3d, DType::kF8E5M2), 1u);
  // Across zero: +smallest subnormal and -smallest subnormal are 2 apart; +0 and -0 are 0.
  EXPECT_EQ(UlpDistance(0x0001, 0x8001, DType::kF16), 2u);
  EXPECT_EQ(UlpDistance(0x0000, 0x8000, DType::kF16), 0u);
  EXPECT_EQ(UlpDistance(0x3ff0000000000000ull, 0x3ff0000000000010ull, DType::kF64), 16u);
  std::vector<uint16_t> a = {0x3f80, 0x4000}, b = {0x3f81, 0x4000};
  BufferComparison c = CompareElements(BytesOf(a), BytesOf(b), DType::kBF16, {0, 0});
  EXPECT_EQ(c.mismatched, 1u);
  EXPECT_DOUBLE_EQ(c.first_mismatch->a, 1.0);
  EXPECT_DOUBLE_EQ(c.first_mismatch->b, 1.0078125);  // bf16 has 7 mantissa bits
  EXPECT_EQ(c.ulp[1], 1u);
}

TEST(TensorCompareTest, IntegersAndRawHaveNoUlps) {
  std::vector<int32_t> a = {1, 2, 3}, b = {1, 5, 3};
  BufferComparison c = CompareElements(BytesOf(a), BytesOf(b), DType::kI32, {0, 0});
  EXPECT_FALSE(c.has_ulp);
  EXPECT_EQ(c.mismatched, 1u);
  EXPECT_DOUBLE_EQ(c.max_abs_value, 3.0);
  std::vector<uint8_t> ra = {1, 2, 3, 4, 5}, rb = {1, 2, 9, 4, 5};
  BufferComparison r = CompareElements(ra, rb, DType::kRaw, {0, 0});
  EXPECT_FALSE(r.has_ulp);
  EXPECT_EQ(r.n, 5u);
  EXPECT_EQ(r.first_mismatch->index, 2u);
}

TEST(TensorCompareTest, SizesThatDifferAreComparedOverTheShorter) {
  std::vector<float> a = {1, 2, 3}, b = {1, 2};
  BufferComparison c = CompareElements(BytesOf(a), BytesOf(b), DType::kF32, {0, 0});
  EXPECT_TRUE(c.sizes_differ());
  EXPECT_EQ(c.n, 2u);
  EXPECT_FALSE(c.identical());
}

TEST(TensorCompareTest, CosineOfZeroBuffers) {
  std::vector<float> z(4, 0.0f), one(4, 1.0f);
  EXPECT_EQ(CompareElements(BytesOf(z), BytesOf(z), DType::kF32, {}).cosine, 1.0);
  EXPECT_EQ(CompareElements(BytesOf(z), BytesOf(one), DType::kF32, {}).cosine, 0.0);
}

}  // namespace
}  // namespace numtrace::analyzer
