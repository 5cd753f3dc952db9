#include "shim/engine/buffer_scan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "shim/engine/capture_counters.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::LaunchBuilder;

constexpr uint64_t kA = 0x7f00'0000'0000ull, kB = 0x7f00'1000'0000ull, kC = 0x7f00'2000'0000ull;

class BufferScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocs.Insert(kA, 4096, AllocKind::kPlain);
    allocs.Insert(kB, 1 << 20, AllocKind::kStreamOrdered);
    allocs.Insert(kC, 256, AllocKind::kPlain);
  }
  AllocMap allocs;
  std::vector<ScannedBuffer> found;
};

// Confirms one range the allocation map never heard of; counts questions.
class FakeOracle : public RangeOracle {
 public:
  std::optional<Allocation> Confirm(uint64_t address) override {
    ++asked;
    if (address >= kPool && address < kPool + 8192) return Allocation{kPool, 8192, AllocKind::kPlain};
    if (address >= kSegment && address < kSegment + kSegmentBytes) {
      return Allocation{kSegment, kSegmentBytes, AllocKind::kPlain};
    }
    return std::nullopt;
  }
  static constexpr uint64_t kPool = 0x7f00'9000'0000ull;
  static constexpr uint64_t kSegment = 0x7f10'0000'0000ull, kSegmentBytes = 4ull << 30;
  int asked = 0;
};

TEST_F(BufferScanTest, PointersTheMapLacksAreAskedOfTheOracle) {
  FakeOracle oracle;
  LaunchBuilder b("k", 1);
  b.U64(kA).U64(FakeOracle::kPool + 256).U64(7).U64(0x7f00'a000'0000ull);
  const LaunchEvent& e = b.event();
  ScanBuffers(e.params, e.layout, allocs, &found, &oracle);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[1].addr, FakeOracle::kPool);
  EXPECT_EQ(found[1].offset, 256u);
  EXPECT_EQ(found[1].bytes, 8192u);
  EXPECT_EQ(oracle.asked, 2) << "kA came from the map; 7 is no pointer worth a driver query";
  ScanBuffers(e.params, e.layout, allocs, &found);
  EXPECT_EQ(found.size(), 1u) << "without an oracle only the map counts";
}

// A word pointing into a 4 GiB range only the driver knows (a pool
// segment) must not become a 4 GiB buffer.
TEST_F(BufferScanTest, HugeRangesFoundOnlyThroughTheDriverAreRefusedAndCounted) {
  CaptureCounters::Get().Reset();
  FakeOracle oracle;
  LaunchBuilder b("k", 1);
  b.U64(FakeOracle::kSegment + 4096).U64(FakeOracle::kPool);
  const LaunchEvent& e = b.event();
  ScanBuffers(e.params, e.layout, allocs, &found, &oracle);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].addr, FakeOracle::kPool);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kDriverBuffersCapped), 1u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kBuffersFromDriver), 1u);
}

TEST(StepRangeCache, AsksOncePerStepForRangesAndRefusals) {
  FakeOracle oracle;
  StepRangeCache cache(&oracle);
  ASSERT_TRUE(cache.Confirm(FakeOracle::kPool + 8).has_value());
  auto again = cache.Confirm(FakeOracle::kPool + 4000);  // same range, another address
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->start, FakeOracle::kPool);
  EXPECT_FALSE(cache.Confirm(0x1234'0000).has_value());
  EXPECT_FALSE(cache.Confirm(0x1234'0000).has_value());
  EXPECT_EQ(oracle.asked, 2);
  cache.NewStep();  // memory may have been freed and reused
  EXPECT_TRUE(cache.Confirm(FakeOracle::kPool + 8).has_value());
  EXPECT_EQ(oracle.asked, 3);
  cache.Forget(FakeOracle::kPool, 0);  // freed within the step
  EXPECT_TRUE(cache.Confirm(FakeOracle::kPool + 8).has_value());
  EXPECT_EQ(oracle.asked, 4) << "a freed range is asked again";
}

// Review round 4, finding 10: an unmap spanning several cached ranges (an
// expandable segment's cuMemUnmap) cleared only the range at its start.
TEST(StepRangeCache, AnUnmapForgetsEveryRangeItOverlaps) {
  FakeOracle oracle;
  StepRangeCache cache(&oracle);
  constexpr uint64_t kSeg = FakeOracle::kSegment;
  // Three pieces the driver would answer one by one; seed them as answers.
  ASSERT_TRUE(cache.Confirm(FakeOracle::kPool).has_value());
  ASSERT_TRUE(cache.Confirm(kSeg + 16).has_value());
  EXPECT_FALSE(cache.Confirm(kSeg + FakeOracle::kSegmentBytes + 64).has_value());
  EXPECT_EQ(oracle.asked, 3);
  // Unmapped: from inside the pool range through the refused word past the segment.
  cache.Forget(FakeOracle::kPool + 4096, kSeg + FakeOracle::kSegmentBytes + 4096 - FakeOracle::kPool - 4096);
  EXPECT_TRUE(cache.Confirm(FakeOracle::kPool + 8).has_value());
  EXPECT_TRUE(cache.Confirm(kSeg + 16).has_value());
  EXPECT_FALSE(cache.Confirm(kSeg + FakeOracle::kSegmentBytes + 64).has_value());
  EXPECT_EQ(oracle.asked, 6) << "every overlapping answer, and the refusal inside, asked again";
  cache.Forget(0x1000, 16);  // overlaps nothing
  EXPECT_TRUE(cache.Confirm(FakeOracle::kPool + 8).has_value());
  EXPECT_EQ(oracle.asked, 6);
}

TEST_F(BufferScanTest, PlainPointerArguments) {
  LaunchBuilder b("k", 1);
  b.U64(kA).U32(7).U64(kB + 64).U64(12345);
  const LaunchEvent& e = b.event();
  ScanBuffers(e.params, e.layout, allocs, &found);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].arg, 0u);
  EXPECT_EQ(found[0].addr, kA);
  EXPECT_EQ(found[0].offset, 0u);
  EXPECT_EQ(found[0].bytes, 4096u);
  EXPECT_EQ(found[1].arg, 2u);
  EXPECT_EQ(found[1].addr, kB);
  EXPECT_EQ(found[1].offset, 64u);
  EXPECT_EQ(found[1].bytes, 1u << 20);
}

TEST_F(BufferScanTest, PointersInsideStructsAndDeduplication) {
  // Like PyTorch's Array<char*, 3> of data pointers plus an offset calculator.
  struct Packed {
    uint64_t ptrs[3];
    uint32_t sizes[4];
    uint64_t strides[2];
  } s{{kC, kB + 8, kA + 16}, {1, 2, 3, 4}, {8, kA + 32}};
  LaunchBuilder b("k", 1);
  b.U32(99).Struct(&s, sizeof(s)).U64(kC + 4);
  const LaunchEvent& e = b.event();
  ScanBuffers(e.params, e.layout, allocs, &found);
  ASSERT_EQ(found.size(), 3u);  // kA reached twice, kC again in arg 2: once each
  EXPECT_EQ(found[0].addr, kC);
  EXPECT_EQ(found[0].arg, 1u);
  EXPECT_EQ(found[1].addr, kB);
  EXPECT_EQ(found[1].offset, 8u);
  EXPECT_EQ(found[2].addr, kA);
  EXPECT_EQ(found[2].offset, 16u);  // the first pointer into a buffer wins
}

TEST_F(BufferScanTest, MisalignedAndPartialSlots) {
  std::vector<uint8_t> params(48, 0);
  const uint64_t a = kA, b = kB;
  std::memcpy(params.data() + 4, &a, 8);   // not 8-aligned: not a pointer slot word
  std::memcpy(params.data() + 16, &b, 8);  // aligned word inside a 12-byte slot at 12
  const uint64_t c = kC;
  std::memcpy(params.data() + 40, &c, 8);  // slot claims 16 bytes but params end at 48
  std::vector<ParamSlot> layout{{4, 8}, {12, 12}, {40, 16}, {0, 4}};
  ScanBuffers(params, layout, allocs, &found);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].addr, kB);
  EXPECT_EQ(found[0].arg, 1u);
  EXPECT_EQ(found[1].addr, kC);
  EXPECT_EQ(found[1].arg, 2u);
  // A layout pointing past the bytes reads nothing.
  std::vector<ParamSlot> bad{{400, 8}};
  ScanBuffers(params, bad, allocs, &found);
  EXPECT_TRUE(found.empty());
}

TEST_F(BufferScanTest, ValuesOutsideAllocationsAreIgnored) {
  LaunchBuilder b("k", 1);
  b.U64(0).U64(kA + 4096).U64(kC - 1).U64(~0ull);
  const LaunchEvent& e = b.event();
  ScanBuffers(e.params, e.layout, allocs, &found);
  EXPECT_TRUE(found.empty());
}

}  // namespace
}  // namespace numtrace::shim
