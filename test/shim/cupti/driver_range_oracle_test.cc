// File: test/shim/cupti/driver_range_oracle_test.cc
//
// DriverRangeOracle over a fake cuPointerGetAttributes: a mapped range is
// confirmed, the driver's all-zero answer for an unknown pointer, an
// unmapped range and an error are not.
#include "shim/driver/driver_range_oracle.h"

#include <gtest/gtest.h>

#include "shim/driver/driver_api.h"
#include "shim/driver/self_call_guard.h"
#include "shim/engine/capture_counters.h"

namespace numtrace::shim {
namespace {

constexpr uint64_t kStart = 0x7f00'4000'0000ull, kSize = 1 << 20, kUnmapped = 0x7f00'8000'0000ull;

CUresult Attrs(unsigned n, CUpointer_attribute* attrs, void** data, CUdeviceptr p) {
  EXPECT_TRUE(SelfCallGuard::Active()) << "our query must not reach our callbacks";
  if (p == 0xBAD0000) return CUDA_ERROR_INVALID_VALUE;
  uint64_t start = 0, size = 0;
  unsigned mapped = 0;
  if (p >= kStart && p < kStart + kSize) {
    start = kStart;
    size = kSize;
    mapped = 1;
  } else if (p >= kUnmapped && p < kUnmapped + kSize) {
    start = kUnmapped;
    size = kSize;  // reserved VMM range without backing
  }
  for (unsigned i = 0; i < n; ++i) {
    if (attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) *static_cast<CUdeviceptr*>(data[i]) = start;
    if (attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_SIZE) *static_cast<size_t*>(data[i]) = size;
    if (attrs[i] == CU_POINTER_ATTRIBUTE_MAPPED) *static_cast<unsigned*>(data[i]) = mapped;
  }
  return CUDA_SUCCESS;
}

// cuMemGetAddressRange: all of kStart's range is mapped except its last
// quarter; the reserved kUnmapped range has nothing mapped.
CUresult OracleAddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr p) {
  EXPECT_TRUE(SelfCallGuard::Active());
  if (p >= kStart && p < kStart + kSize / 4 * 3) {
    *base = kStart;
    *size = kSize / 4 * 3;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

TEST(DriverRangeOracle, ConfirmsOnlyMappedRangesTheDriverKnows) {
  DriverApi api;
  api.cuPointerGetAttributes = &Attrs;
  api.cuMemGetAddressRange_v2 = &OracleAddressRange;
  DriverRangeOracle oracle(api);
  auto a = oracle.Confirm(kStart + 100);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->start, kStart);
  EXPECT_EQ(a->bytes, kSize / 4 * 3) << "the mapped piece, not the whole reported range";
  EXPECT_FALSE(oracle.Confirm(kStart + kSize - 8).has_value()) << "inside the range, not mapped";
  EXPECT_FALSE(oracle.Confirm(0x5555'0000).has_value()) << "unknown: success with zeros";
  EXPECT_FALSE(oracle.Confirm(kUnmapped + 8).has_value()) << "reserved, not mapped";
  EXPECT_FALSE(oracle.Confirm(0xBAD0000).has_value()) << "an error is no confirmation";
  EXPECT_GE(CaptureCounters::Get().value(Counter::kRangesUnmapped), 1u) << "refusals are counted";
}

}  // namespace
}  // namespace numtrace::shim
