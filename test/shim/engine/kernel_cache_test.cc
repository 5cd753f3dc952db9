// File: test/shim/engine/kernel_cache_test.cc
//
// KernelCache: per-argument dtypes and where they come from, annotations
// overriding the name (and being picked up after the entry was cached),
// kernel filters, and handle-less lookups keyed by name.
#include "shim/engine/kernel_cache.h"

#include <gtest/gtest.h>

#include "common/settings/config.h"
#include "shim/engine/annotations.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::ConfigFrom;

constexpr const char* kGather =
    "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
    "long, long, bool)";

TEST(KernelCacheTest, PerArgDTypeFromTheNameEvenWhenThePrimaryIsRaw) {
  settings::Config config = ConfigFrom({});
  KernelCache cache(config, nullptr);
  const KernelInfo& k = cache.Get(0x10, kGather);
  ASSERT_EQ(k.inferred.primary, DType::kRaw);
  // Arg 2 is the long* index tensor: its dtype was read from the name.
  EXPECT_EQ(k.DTypeOf(2), std::make_pair(DType::kI64, DTypeSource::kName));
  // The char* data buffers stay raw, decided by nothing.
  EXPECT_EQ(k.DTypeOf(0), std::make_pair(DType::kRaw, DTypeSource::kDefault));
}

TEST(KernelCacheTest, PrimaryDTypeForArgumentsWithoutOverride) {
  settings::Config config = ConfigFrom({});
  KernelCache cache(config, nullptr);
  const KernelInfo& k = cache.Get(0x20, "void foo<float, long>(float*, long const*)");
  EXPECT_EQ(k.DTypeOf(0), std::make_pair(DType::kF32, DTypeSource::kName));
  EXPECT_EQ(k.DTypeOf(1), std::make_pair(DType::kI64, DTypeSource::kName));
}

TEST(KernelCacheTest, AnnotationAddedAfterCachingWins) {
  settings::Config config = ConfigFrom({});
  AnnotationTable annotations;
  KernelCache cache(config, &annotations);
  EXPECT_EQ(cache.Get(0x30, "triton_poi_fused_add_0").DTypeOf(1).first, DType::kRaw);
  std::string error;
  ASSERT_TRUE(annotations.Add("triton_poi_fused_add_0", "bf16,f32", &error)) << error;
  const KernelInfo& k = cache.Get(0x30, "triton_poi_fused_add_0");
  EXPECT_EQ(k.DTypeOf(1), std::make_pair(DType::kF32, DTypeSource::kSignature));
  // Past the annotated arguments the name's answer (raw) still holds.
  EXPECT_EQ(k.DTypeOf(5).first, DType::kRaw);
}

TEST(KernelCacheTest, FiltersAndNameKeyedLookups) {
  settings::Config config = ConfigFrom({{"NUMTRACE_KERNEL", "gemm"}, {"NUMTRACE_KERNEL_EXCLUDE", "splitK"}});
  KernelCache cache(config, nullptr);
  EXPECT_TRUE(cache.Get(0, "ampere_sgemm_128x64_nn").selected);
  EXPECT_FALSE(cache.Get(0, "ampere_sgemm_128x64_nn_splitK").selected);
  EXPECT_FALSE(cache.Get(0, "triton_poi_fused_add_0").selected);
  // Same name again without a handle: the cached entry, not a new one.
  const size_t before = cache.size();
  EXPECT_EQ(&cache.Get(0, "triton_poi_fused_add_0"), &cache.Get(0, "triton_poi_fused_add_0"));
  EXPECT_EQ(cache.size(), before);
}

}  // namespace
}  // namespace numtrace::shim
