// The one loader of the real kernel-name lists: every list the tests use is in
// the repository and loads; a missing one fails with its path, not a crash.
#include "test/util/kernel_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace numtrace::testing {
namespace {

TEST(KernelNames, EveryListIsInTheRepositoryAndLoads) {
  const std::pair<const char*, size_t> lists[] = {
      {"1_aten_eager_kernels.txt", 200},
      {"2_gemm_kernels.txt", 150},
      {"3_attention_kernels.txt", 20},
      {"4_triton_inductor_kernels.txt", 200},
      {"5_nccl_kernels.txt", 10},
      {"extra_cudnn_conv_kernels.txt", 10},
      {"extra_other_kernels.txt", 10},
      {"6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt", 1428},
      {"6b_seq_trainstep_recsys_V100_rank1of2_fullstep_fullnames.txt", 1555},
      {"6c_seq_trainstep_compiled_A100_rank0of16_fullstep_fullnames.txt", 1074},
  };
  for (const auto& [file, at_least] : lists) {
    std::vector<std::string> names = LoadKernelNames(file);
    EXPECT_GE(names.size(), at_least) << file;
    for (const std::string& n : names) {
      ASSERT_FALSE(n.empty()) << file;
      ASSERT_EQ(n.find('\t'), std::string::npos) << file << ": " << n;
    }
  }
  // Step files keep launch order: one entry per launch, the name last.
  EXPECT_EQ(LoadKernelNames("6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt").size(), 1428u);
}

TEST(KernelNames, AMissingListFailsWithItsPath) {
  try {
    LoadKernelNames("no_such_list.txt");
    ADD_FAILURE() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("kernel-names/no_such_list.txt"));
  }
}

}  // namespace
}  // namespace numtrace::testing
