// File: test/shim/reduce/host_reduce_test.cc
// ReduceHost against the naive reference (exact-sum buffers), the documented
// summation order (inexact buffers), sign and tail rules, and the hash.
#include "shim/reduce/host_reduce.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "shim/reduce/tile_reduce.h"
#include "test/shim/reduce/reduce_test_util.h"

namespace numtrace::shim {
namespace {

using testing::Bits;
using testing::MakeBuffer;
using testing::RefReduce;
using testing::StatsDiff;

constexpr DType kAll[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16,
                          DType::kF8E4M3, DType::kF8E5M2, DType::kI64, DType::kI32,
                          DType::kI16, DType::kI8, DType::kU8, DType::kBool, DType::kRaw};

TEST(ReduceHost, MatchesReferenceForEveryDtypeAndSize) {
  for (DType t : kAll) {
    for (uint64_t n : {0, 1, 255, 4095, 4096, 4097, 1048579}) {
      for (unsigned flags : {testing::kSpecials, testing::kSubnormals}) {
        const auto buf = MakeBuffer(t, n, static_cast<uint32_t>(n) + 11 * flags, flags);
        const BufferStats got = ReduceHost(buf.data(), buf.size(), t);
        const BufferStats want = RefReduce(buf.data(), buf.size(), t);
        ASSERT_EQ(StatsDiff(got, want), "") << DTypeName(t) << " n=" << n << " flags=" << flags;
        ASSERT_EQ(got.n, t == DType::kRaw ? buf.size() : n);
      }
    }
  }
}

TEST(ReduceHost, SpecialsAreCounted) {
  // Guards against a generator that never produces what the test above needs.
  const auto buf = MakeBuffer(DType::kBF16, 100000, 3, testing::kSpecials);
  const BufferStats s = ReduceHost(buf.data(), buf.size(), DType::kBF16);
  EXPECT_GT(s.nan, 1000u);
  EXPECT_GT(s.inf, 1000u);
  EXPECT_GT(s.ninf, 1000u);
  EXPECT_GT(s.zero, 1000u);
  const auto sub = MakeBuffer(DType::kF16, 100000, 3, testing::kSubnormals);
  EXPECT_GT(ReduceHost(sub.data(), sub.size(), DType::kF16).sub, 10000u);
}

TEST(ReduceHost, UnalignedTailsAndPointers) {
  for (DType t : kAll) {
    for (uint64_t tail = 0; tail < static_cast<uint64_t>(DTypeSize(t)); ++tail) {
      for (uint64_t n : {0, 1, 3, 4097}) {  // byte counts off multiples of 8
        auto buf = MakeBuffer(t, n, static_cast<uint32_t>(tail), testing::kSpecials, tail);
        const BufferStats want = RefReduce(buf.data(), buf.size(), t);
        ASSERT_EQ(StatsDiff(ReduceHost(buf.data(), buf.size(), t), want), "")
            << DTypeName(t) << " n=" << n << " tail=" << tail;
        // The same bytes at an odd address give the same bits.
        std::vector<uint8_t> shifted(buf.size() + 3);
        std::memcpy(shifted.data() + 3, buf.data(), buf.size());
        ASSERT_EQ(StatsDiff(ReduceHost(shifted.data() + 3, buf.size(), t), want), "");
      }
    }
  }
}

TEST(ReduceHost, SignedZeroMinMaxIgnoresOrder) {
  // One -0.0 among +0.0s, early (lane 0, tile 0) or late (another lane and
  // tile): min is -0.0 and max +0.0 either way.
  for (size_t neg_at : {size_t{0}, size_t{4500}}) {
    std::vector<float> v(5000, 0.0f);
    v[neg_at] = -0.0f;
    const BufferStats s = ReduceHost(v.data(), v.size() * 4, DType::kF32);
    EXPECT_TRUE(std::signbit(s.min)) << neg_at;
    EXPECT_FALSE(std::signbit(s.max)) << neg_at;
    EXPECT_EQ(s.zero, 5000u);
  }
  const float all_neg[3] = {-0.0f, -0.0f, -0.0f};
  const BufferStats s = ReduceHost(all_neg, sizeof all_neg, DType::kF32);
  EXPECT_TRUE(std::signbit(s.min));
  EXPECT_TRUE(std::signbit(s.max));
}

TEST(ReduceHost, NoFiniteElementMeansNoRange) {
  const float v[4] = {NAN, INFINITY, -INFINITY, -NAN};
  const BufferStats s = ReduceHost(v, sizeof v, DType::kF32);
  EXPECT_FALSE(s.has_range);
  EXPECT_EQ(s.nan, 2u);
  EXPECT_EQ(s.inf, 1u);
  EXPECT_EQ(s.ninf, 1u);
  EXPECT_EQ(s.finite(), 0u);
  EXPECT_EQ(s.sum, 0.0);
  const BufferStats empty = ReduceHost(nullptr, 0, DType::kF32);
  EXPECT_FALSE(empty.has_range);
  EXPECT_EQ(empty.n, 0u);
  EXPECT_NE(empty.hash, ReduceHost("\0", 1, DType::kF32).hash);  // 1 byte of tail
}

TEST(ReduceHost, SmallExample) {
  const float v[3] = {1.f, -2.f, NAN};
  const BufferStats s = ReduceHost(v, sizeof v, DType::kF32);
  EXPECT_EQ(s.n, 3u);
  EXPECT_EQ(s.nan, 1u);
  EXPECT_EQ(s.min, -2.0);
  EXPECT_EQ(s.max, 1.0);
  EXPECT_EQ(s.sum, -1.0);
  EXPECT_EQ(s.l1, 3.0);
  EXPECT_EQ(s.l2, std::sqrt(5.0));
  const uint8_t flags[4] = {0, 1, 2, 255};
  const BufferStats b = ReduceHost(flags, 4, DType::kBool);
  EXPECT_EQ(b.sum, 3.0);
  EXPECT_EQ(b.zero, 1u);
  const BufferStats raw = ReduceHost(v, sizeof v, DType::kRaw);
  EXPECT_EQ(raw.n, 12u);
  EXPECT_EQ(raw.nan + raw.zero, 0u);
  EXPECT_FALSE(raw.has_range);
}

// The documented order, written out independently for `sum`: lanes fold
// strided elements, a pairwise tree per tile, lanes fold tiles, a tree.
double DocumentedOrderSum(const std::vector<double>& x) {
  auto tree = [](std::vector<double> p) {
    for (size_t s = 128; s >= 1; s /= 2) for (size_t l = 0; l < s; ++l) p[l] = p[l] + p[l + s];
    return p[0];
  };
  const size_t tiles = std::max<size_t>(1, (x.size() + 4095) / 4096);
  std::vector<double> tile_sums;
  for (size_t t = 0; t < tiles; ++t) {
    std::vector<double> lanes(256, 0.0);
    for (size_t l = 0; l < 256; ++l)
      for (size_t j = 0; j < 16; ++j) {
        const size_t i = t * 4096 + l + j * 256;
        if (i < x.size()) lanes[l] = lanes[l] + x[i];
      }
    tile_sums.push_back(tree(lanes));
  }
  std::vector<double> lanes(256, 0.0);
  for (size_t i = 0; i < tile_sums.size(); ++i) lanes[i % 256] = lanes[i % 256] + tile_sums[i];
  return tree(lanes);
}

TEST(ReduceHost, FollowsDocumentedOrderOnInexactSums) {
  // 300 tiles: more than 256, so level 2 folds several tiles per lane.
  std::mt19937_64 rng(5);
  std::vector<double> x(300 * 4096 + 17);
  for (auto& v : x) v = std::ldexp(static_cast<double>(rng() % 1000000) + 0.1, rng() % 80 - 40);
  const double want = DocumentedOrderSum(x);
  const BufferStats s = ReduceHost(x.data(), x.size() * 8, DType::kF64);
  EXPECT_EQ(Bits(s.sum), Bits(want));
  double naive = 0;
  for (double v : x) naive += v;
  EXPECT_NE(Bits(naive), Bits(want)) << "inputs too tame to tell orders apart";
}

TEST(ReduceHost, NoFusedMultiplyAdd) {
  // Lane 0 folds elements 0 and 256: sumsq = x0*x0 then + x256*x256. An FMA
  // would round that second step once instead of twice.
  const double a = 1.0, b = 1.0 + 17 * std::ldexp(1.0, -30);
  volatile double aa = a * a, bb = b * b;
  const double separate = aa + bb;
  ASSERT_NE(Bits(separate), Bits(std::fma(b, b, aa))) << "values do not expose an FMA";
  std::vector<double> x(257, 0.0);
  x[0] = a;
  x[256] = b;
  const Partial p = ReduceHostPartial(x.data(), x.size() * 8, DType::kF64);
  EXPECT_EQ(Bits(p.sumsq), Bits(separate));
}

TEST(ReduceHost, DeterministicBits) {
  for (DType t : kAll) {
    const auto buf = MakeBuffer(t, 70001, 9, testing::kRandomBits, 5);
    const BufferStats a = ReduceHost(buf.data(), buf.size(), t);
    const auto copy = buf;
    const BufferStats b = ReduceHost(copy.data(), copy.size(), t);
    EXPECT_EQ(StatsDiff(a, b), "") << DTypeName(t);
  }
}

// The parallel split (by level-2 slot) must give the single-thread bits for
// every thread count, including counts that do not divide 256 and more
// threads than the buffer has tiles, on sums that are order sensitive.
TEST(ReduceHost, ParallelIsBitIdenticalToOneThread) {
  std::mt19937_64 rng(7);
  for (uint64_t n : {uint64_t{1}, uint64_t{4097}, uint64_t{300 * 4096 + 17}, uint64_t{1100 * 4096 + 5}}) {
    std::vector<double> x(n);
    for (auto& v : x) v = std::ldexp(static_cast<double>(rng() % 1000000) + 0.1, static_cast<int>(rng() % 80) - 40);
    const Partial one = ReduceHostPartial(x.data(), n * 8, DType::kF64, 1);
    for (unsigned threads : {2u, 3u, 7u, 64u, 256u, 1000u}) {
      const Partial many = ReduceHostPartial(x.data(), n * 8, DType::kF64, threads);
      ASSERT_EQ(std::memcmp(&one, &many, sizeof one), 0) << "n=" << n << " threads=" << threads;
    }
  }
  for (DType t : kAll) {
    const auto buf = MakeBuffer(t, 2000003, 3, testing::kRandomBits, 5);
    EXPECT_EQ(StatsDiff(ReduceHost(buf.data(), buf.size(), t, 5), ReduceHost(buf.data(), buf.size(), t)), "")
        << DTypeName(t);
  }
  EXPECT_GE(HostReduceThreads(), 1u);
}

TEST(ReduceHash, IndependentOfDtype) {
  const auto buf = MakeBuffer(DType::kRaw, 40000 + 3, 2, testing::kRandomBits);
  const uint64_t h = ReduceHost(buf.data(), buf.size(), DType::kRaw).hash;
  EXPECT_EQ(h, testing::RefHash(buf.data(), buf.size()));
  for (DType t : kAll) EXPECT_EQ(ReduceHost(buf.data(), buf.size(), t).hash, h) << DTypeName(t);
}

TEST(ReduceHash, ChangesWithAnySingleByte) {
  auto buf = MakeBuffer(DType::kRaw, 1029, 4, testing::kRandomBits);
  const uint64_t h = ReduceHost(buf.data(), buf.size(), DType::kF32).hash;
  for (size_t i = 0; i < buf.size(); ++i) {
    for (uint8_t flip : {uint8_t{1}, uint8_t{0x80}}) {
      buf[i] ^= flip;
      ASSERT_NE(ReduceHost(buf.data(), buf.size(), DType::kF32).hash, h) << "byte " << i;
      buf[i] ^= flip;
    }
  }
  // Swapping two words and appending a zero byte change it too.
  auto swapped = buf;
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
  EXPECT_NE(ReduceHost(swapped.data(), swapped.size(), DType::kRaw).hash, h);
  auto longer = buf;
  longer.push_back(0);
  EXPECT_NE(ReduceHost(longer.data(), longer.size(), DType::kRaw).hash, h);
}

TEST(TileReduce, TileCounts) {
  EXPECT_EQ(TileCount(0, DType::kF32), 1u);
  EXPECT_EQ(TileCount(4096 * 4, DType::kF32), 1u);
  EXPECT_EQ(TileCount(4096 * 4 + 1, DType::kF32), 2u);  // the tail byte gets a tile
  EXPECT_EQ(TileCount(4097, DType::kRaw), 2u);
  EXPECT_EQ(ElementCount(4097, DType::kF64), 512u);
}

}  // namespace
}  // namespace numtrace::shim
