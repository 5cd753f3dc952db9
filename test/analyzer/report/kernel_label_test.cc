#include "analyzer/report/kernel_label.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace numtrace::analyzer {
namespace {

TEST(KernelLabelTest, StripsReturnTypeScopesTemplatesAndParameters) {
  EXPECT_EQ(KernelLabel("void at::native::vectorized_elementwise_kernel<4, at::native::"
                        "CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>>(int, "
                        "at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(KernelLabel("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(KernelLabel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_nn_align4>("
                        "cutlass_80_tensorop_s1688gemm_128x128_32x5_nn_align4::Params)"),
            "Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_nn_align4>");
  EXPECT_EQ(KernelLabel("void (anonymous namespace)::softmax_warp_forward<float, 8>(float*)"),
            "softmax_warp_forward");
  EXPECT_EQ(KernelLabel("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn"),
            "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn");
}

TEST(KernelLabelTest, RealNamesGiveNonEmptyShortLabels) {
  std::ifstream in(std::string(NUMTRACE_SHARED_DIR) + "/data/kernel-names/1_aten_eager_kernels.txt");
  if (!in) GTEST_SKIP() << "shared kernel names not found";
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string label = KernelLabel(line);
    EXPECT_FALSE(label.empty()) << line;
    EXPECT_LE(label.size(), line.size()) << line;
    EXPECT_EQ(label.find(','), std::string::npos) << line;
    ++n;
  }
  EXPECT_GT(n, 100);
}

}  // namespace
}  // namespace numtrace::analyzer
