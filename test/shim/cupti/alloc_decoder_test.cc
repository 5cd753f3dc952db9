// File: test/shim/cupti/alloc_decoder_test.cc
//
// Allocation/free decoding from the real parameter structs, as read at EXIT.
#include "shim/cupti/alloc_decoder.h"

#include <cuda.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace numtrace::shim {
namespace {

TEST(AllocDecoder, PlainAllocation) {
  CUdeviceptr ptr = 0x7f0000000000;
  cuMemAlloc_v2_params p{&ptr, 1 << 20};
  auto a = DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &p, 2);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->address, 0x7f0000000000u);
  EXPECT_EQ(a->bytes, 1u << 20);
  EXPECT_EQ(a->kind, AllocKind::kPlain);
  EXPECT_EQ(a->device, 2);
  ptr = 0;  // a failed call leaves nothing to record
  EXPECT_FALSE(DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &p, 0).has_value());
}

TEST(AllocDecoder, PitchUsesReturnedPitch) {
  CUdeviceptr ptr = 0x1000;
  size_t pitch = 512;
  cuMemAllocPitch_v2_params p{&ptr, &pitch, 500, 10, 4};
  auto a = DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, &p, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bytes, 5120u);
}

TEST(AllocDecoder, StreamOrderedAllocations) {
  CUdeviceptr ptr = 0x2000;
  cuMemAllocAsync_ptsz_params p{&ptr, 300, nullptr};
  auto a = DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, &p, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->kind, AllocKind::kStreamOrdered);
  EXPECT_EQ(a->bytes, 300u);
  cuMemAllocFromPoolAsync_params q{&ptr, 64, nullptr, nullptr};
  a = DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync, &q, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bytes, 64u);
  cuMemFreeAsync_params f{0x2000, nullptr};
  auto fr = DecodeFree(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, &f);
  ASSERT_TRUE(fr.has_value());
  EXPECT_EQ(fr->address, 0x2000u);
  EXPECT_EQ(fr->kind, AllocKind::kStreamOrdered);
}

TEST(AllocDecoder, VirtualMapAndUnmap) {
  cuMemMap_params m{0x10000000, 2 << 20, 0, 0, 0};
  auto a = DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemMap, &m, 1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->kind, AllocKind::kVirtualMap);
  EXPECT_EQ(a->bytes, 2u << 20);
  cuMemUnmap_params u{0x10000000, 2 << 20};
  auto f = DecodeFree(CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &u);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->bytes, 2u << 20) << "unmap knows its size";
}

TEST(AllocDecoder, IgnoresOtherIdsAndHandles) {
  cuMemCreate_params c{};
  EXPECT_FALSE(DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &c, 0).has_value());
  EXPECT_FALSE(DecodeFree(CUPTI_DRIVER_TRACE_CBID_cuMemRelease, &c).has_value());
  EXPECT_FALSE(DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, nullptr, 0).has_value());
  cuMemFree_v2_params f{0x3000};
  EXPECT_FALSE(DecodeAlloc(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &f, 0).has_value());
  EXPECT_TRUE(DecodeFree(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &f).has_value());
  auto ids = AllocCallbackIds();
  EXPECT_NE(std::find(ids.begin(), ids.end(), CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz), ids.end());
}

}  // namespace
}  // namespace numtrace::shim
