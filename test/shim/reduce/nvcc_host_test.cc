// File: test/shim/reduce/nvcc_host_test.cc
// The nvcc-compiled shared headers (reduce_nvcc_host.cu) against ReduceHost
// on random bit patterns, where any change of order or rounding would show.
#include <gtest/gtest.h>

#include "shim/reduce/host_reduce.h"
#include "test/shim/reduce/reduce_nvcc_host.h"
#include "test/shim/reduce/reduce_test_util.h"

namespace numtrace::shim {
namespace {

TEST(NvccHost, SameBitsAsReduceHost) {
  for (int ti = 0; ti < kDTypeCount; ++ti) {
    const DType t = static_cast<DType>(ti);
    for (uint64_t n : {0, 1, 4097, 300 * 4096 + 5}) {
      for (unsigned flags : {testing::kRandomBits, testing::kSpecials}) {
        const auto buf = testing::MakeBuffer(t, n, static_cast<uint32_t>(n + ti), flags, 3);
        const BufferStats want = ReduceHost(buf.data(), buf.size(), t);
        const BufferStats got = testing::ReduceViaNvccHost(buf.data(), buf.size(), t);
        ASSERT_EQ(testing::StatsDiff(got, want), "") << DTypeName(t) << " n=" << n;
      }
    }
  }
}

}  // namespace
}  // namespace numtrace::shim
