// The default tolerance must tell float reduction-order noise from real
// divergence. These tests compute real float32 GEMMs and reductions in two
// summation orders (noise) and with small perturbations, round the outputs to
// f32, f16 and bf16, take their statistics with a local reference, and check
// how analyzer/judge/buffer_compare.h classifies them.
#include "analyzer/judge/buffer_compare.h"
#include "analyzer/judge/tolerance_model.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace numtrace::analyzer {
namespace {

// Rounds a float to the storage dtype and returns the stored bits.
uint32_t Store(float v, DType t, double* value) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if (t == DType::kF32) {
    *value = v;
    return bits;
  }
  if (t == DType::kBF16) {  // round to nearest even on the top 16 bits
    uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
    float f;
    std::memcpy(&f, &rounded, 4);
    *value = f;
    return rounded >> 16;
  }
  _Float16 h = static_cast<_Float16>(v);  // f16, round to nearest even
  uint16_t hb;
  std::memcpy(&hb, &h, 2);
  *value = static_cast<float>(h);
  return hb;
}

// The statistics of float outputs stored as `dtype`, as the shim's host
// reference defines them (double accumulation; hash of the stored bytes).
Buffer Measure(const std::vector<float>& out, DType dtype) {
  Buffer b;
  b.dtype = dtype;
  b.role = Role::kOut;
  b.bytes = out.size() * DTypeSize(dtype);
  BufferStats& s = b.stats;
  s.n = out.size();
  uint64_t h = 0xcbf29ce484222325ULL;
  double sq = 0;
  for (float f : out) {
    double v;
    uint32_t bits = Store(f, dtype, &v);
    for (int k = 0; k < DTypeSize(dtype); ++k) h = (h ^ ((bits >> (8 * k)) & 0xff)) * 0x100000001b3ULL;
    if (!s.has_range) {
      s.min = s.max = v;
      s.has_range = true;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.sum += v;
    s.l1 += std::fabs(v);
    sq += v * v;
    s.zero += v == 0;
  }
  s.l2 = std::sqrt(sq);
  s.hash = h;
  return b;
}

enum class Order { kForward, kReverse, kBlocked };

// C = A * B (m x k times k x n) accumulated in float in the given order.
std::vector<float> Gemm(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n, Order order) {
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      if (order == Order::kForward) {
        for (int p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
      } else if (order == Order::kReverse) {
        for (int p = k - 1; p >= 0; --p) acc += a[i * k + p] * b[p * n + j];
      } else {  // 8 partial sums, as a split-K or tensor-core kernel would
        float part[8] = {};
        for (int p = 0; p < k; ++p) part[p % 8] += a[i * k + p] * b[p * n + j];
        for (float x : part) acc += x;
      }
      c[static_cast<size_t>(i) * n + j] = acc;
    }
  }
  return c;
}

// Row sums of an r x w matrix, forward or in reverse.
std::vector<float> RowSums(const std::vector<float>& x, int r, int w, Order order) {
  std::vector<float> out(r);
  for (int i = 0; i < r; ++i) {
    float acc = 0;
    for (int q = 0; q < w; ++q) acc += x[i * w + (order == Order::kReverse ? w - 1 - q : q)];
    out[i] = acc;
  }
  return out;
}

std::vector<float> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

const DType kDtypes[] = {DType::kF32, DType::kF16, DType::kBF16};
const Tolerance kDefault{};  // rtol 1e-5, atol 0

struct Outputs {
  std::vector<float> base, noise1, noise2;
};

Outputs GemmOutputs() {
  const int m = 48, k = 768, n = 64;
  std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2);
  return {Gemm(a, b, m, k, n, Order::kForward), Gemm(a, b, m, k, n, Order::kReverse),
          Gemm(a, b, m, k, n, Order::kBlocked)};
}

TEST(Tolerance, DefaultsAreTheSpecExample) {
  EXPECT_EQ(kDefault.rtol, 1e-5);
  EXPECT_EQ(kDefault.atol, 0);
  // rtol is the floor; above it the calibrated per-statistic thresholds.
  EXPECT_EQ(RelativeThreshold(Statistic::kL2, DType::kF32, 1024, 1e-5), 1e-5);
  EXPECT_EQ(RelativeThreshold(Statistic::kMax, DType::kBF16, 1024, 1e-5), 4 * std::ldexp(1.0, -8));
  EXPECT_DOUBLE_EQ(RelativeThreshold(Statistic::kL1, DType::kBF16, 1024, 1e-5), 1.625 * std::ldexp(1.0, -8));
  EXPECT_EQ(RelativeThreshold(Statistic::kMin, DType::kF16, 1024, 1e-5), 4 * std::ldexp(1.0, -11));
  EXPECT_EQ(RelativeThreshold(Statistic::kSum, DType::kF64, 1, 1e-5), 1e-5);
  // A one-element aggregate is an element: no tighter than the extremes' rule.
  EXPECT_GE(RelativeThreshold(Statistic::kL2, DType::kBF16, 1, 0), RelativeThreshold(Statistic::kMax, DType::kBF16, 1, 0));
  // --rtol loosens every statistic.
  EXPECT_EQ(RelativeThreshold(Statistic::kL2, DType::kBF16, 1024, 0.05), 0.05);
}

TEST(Tolerance, GemmSummationOrderIsNoiseInEveryDtype) {
  Outputs o = GemmOutputs();
  ASSERT_NE(o.base, o.noise1);  // the orders really differ in float32
  for (DType t : kDtypes) {
    Buffer base = Measure(o.base, t);
    for (const auto* other : {&o.noise1, &o.noise2}) {
      BufferVerdict v = CompareBuffers(base, Measure(*other, t), kDefault);
      EXPECT_TRUE(v.status == PairStatus::kWithinTolerance || v.status == PairStatus::kBitwiseEqual)
          << DTypeName(t) << " rel " << v.rel_diff;
      std::printf("[ info ] gemm order noise %-5s rel_diff %.3g\n", std::string(DTypeName(t)).c_str(), v.rel_diff);
    }
  }
  // float32 noise is really there (not bitwise) and measured.
  BufferVerdict f32 = CompareBuffers(Measure(o.base, DType::kF32), Measure(o.noise1, DType::kF32), kDefault);
  EXPECT_EQ(f32.status, PairStatus::kWithinTolerance);
  EXPECT_GT(f32.rel_diff, 0);
}

TEST(Tolerance, ReductionOrderIsNoise) {
  std::vector<float> x = Random(256 * 4096, 3);
  std::vector<float> fwd = RowSums(x, 256, 4096, Order::kForward);
  std::vector<float> rev = RowSums(x, 256, 4096, Order::kReverse);
  ASSERT_NE(fwd, rev);
  for (DType t : kDtypes) {
    BufferVerdict v = CompareBuffers(Measure(fwd, t), Measure(rev, t), kDefault);
    EXPECT_TRUE(v.status == PairStatus::kWithinTolerance || v.status == PairStatus::kBitwiseEqual)
        << DTypeName(t) << " rel " << v.rel_diff;
  }
}

TEST(Tolerance, SmallPerturbationsDiverge) {
  Outputs o = GemmOutputs();
  // float32: 1e-4 relative on a quarter of the outputs.
  std::vector<float> p = o.base;
  for (size_t i = 0; i < p.size() / 4; ++i) p[i] *= 1.0f + 1e-4f;
  BufferVerdict f32 = CompareBuffers(Measure(o.base, DType::kF32), Measure(p, DType::kF32), kDefault);
  EXPECT_EQ(f32.status, PairStatus::kDiverged) << f32.rel_diff;
  // float32: only the largest element off by 1e-4 relative.
  std::vector<float> q = o.base;
  auto it = std::max_element(q.begin(), q.end(), [](float x, float y) { return std::fabs(x) < std::fabs(y); });
  *it *= 1.0f + 1e-4f;
  EXPECT_EQ(CompareBuffers(Measure(o.base, DType::kF32), Measure(q, DType::kF32), kDefault).status,
            PairStatus::kDiverged);
  // A one-layer change (a bias of a few percent of the output's RMS added to
  // every element) diverges in every dtype, beyond what bf16 can resolve.
  double rms = 0;
  for (float v : o.base) rms += double(v) * v;
  rms = std::sqrt(rms / o.base.size());
  for (DType t : kDtypes) {
    float bias = static_cast<float>((t == DType::kBF16 ? 0.05 : 0.01) * rms);
    std::vector<float> layer = o.base;
    for (float& v : layer) v += bias;
    BufferVerdict v = CompareBuffers(Measure(o.base, t), Measure(layer, t), kDefault);
    EXPECT_EQ(v.status, PairStatus::kDiverged) << DTypeName(t) << " rel " << v.rel_diff;
  }
  // The same 1e-4 perturbation in bf16 is below what bf16 stores: not
  // flagged (documented limit: stats resolve about 4 units of roundoff).
  BufferVerdict bf = CompareBuffers(Measure(o.base, DType::kBF16), Measure(p, DType::kBF16), kDefault);
  EXPECT_NE(bf.status, PairStatus::kDiverged);
}

TEST(CompareBuffers, LayoutNonfiniteIntegerAndAtol) {
  Buffer a = Measure({1, 2, 3, 4}, DType::kF32);
  Buffer b = a;
  EXPECT_EQ(CompareBuffers(a, b, kDefault).status, PairStatus::kBitwiseEqual);
  b = Measure({1, 2, 3}, DType::kF32);
  EXPECT_EQ(CompareBuffers(a, b, kDefault).status, PairStatus::kLayoutMismatch);
  b = Measure({1, 2, 3, 4}, DType::kF16);
  EXPECT_EQ(CompareBuffers(a, b, kDefault).status, PairStatus::kLayoutMismatch);
  // Equal bytes under different labels are equal; different bytes of equal
  // size under different labels are compared as bytes: diverged, score inf.
  b = a;
  b.dtype = DType::kRaw;
  b.stats.n = 16;
  EXPECT_EQ(CompareBuffers(a, b, kDefault).status, PairStatus::kBitwiseEqual);
  b.stats.hash ^= 1;
  BufferVerdict raw = CompareBuffers(a, b, kDefault);
  EXPECT_EQ(raw.status, PairStatus::kDiverged);
  EXPECT_TRUE(std::isinf(raw.score));
  b = a;
  b.stats.hash ^= 1;
  b.stats.nan = 1;
  EXPECT_EQ(CompareBuffers(a, b, kDefault).status, PairStatus::kNonfiniteMismatch);
  // Each count on its own: +Inf, and -Inf (a mutant that dropped -Inf survived).
  for (uint64_t BufferStats::*count : {&BufferStats::inf, &BufferStats::ninf}) {
    b = a;
    b.stats.hash ^= 1;
    b.stats.*count = 1;
    EXPECT_EQ(CompareBuffers(a, b, kDefault).status, PairStatus::kNonfiniteMismatch);
  }
  // Integers: any change of bytes diverges, even with equal sums.
  Buffer ia = a, ib = a;
  ia.dtype = ib.dtype = DType::kI32;
  ib.stats.hash ^= 1;
  EXPECT_EQ(CompareBuffers(ia, ib, kDefault).status, PairStatus::kDiverged);
  // atol absorbs absolute differences near zero.
  Buffer z1 = Measure({1e-7f, -1e-7f, 0, 0}, DType::kF32), z2 = Measure({2e-7f, -1e-7f, 0, 0}, DType::kF32);
  EXPECT_EQ(CompareBuffers(z1, z2, kDefault).status, PairStatus::kDiverged);
  BufferVerdict loose = CompareBuffers(z1, z2, Tolerance{1e-5, 1e-6});
  EXPECT_EQ(loose.status, PairStatus::kWithinTolerance);
  EXPECT_GT(loose.score, 0);
  EXPECT_LE(loose.score, 1);
}

}  // namespace
}  // namespace numtrace::analyzer
