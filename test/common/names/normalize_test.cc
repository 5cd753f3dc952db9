// Tests for common/names/normalize.h on the real kernel names of
// test/data/kernel-names.
#include "common/names/normalize.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/util/kernel_names.h"

namespace numtrace {
namespace {

using testing::LoadKernelNames;

std::vector<std::string> Names(const std::string& file) { return LoadKernelNames(file); }

// The 1-based line of file holding a name.
std::string Line(const std::string& file, size_t line) {
  std::vector<std::string> names = Names(file);
  EXPECT_LE(line, names.size());
  return line <= names.size() ? names[line - 1] : "";
}

constexpr const char* kAten = "1_aten_eager_kernels.txt";

TEST(NormalizedName, KinetoAndNsightSpellingsOfOneKernelAgree) {
  // Pairs of lines in the ATen file that print one kernel two ways: Nsight
  // `(int)4`, `char *`, `(unsigned long)3`, `T2` parameters, `[lambda(int)
  // (instance 1)]`, vs kineto `4`, `char*`, `3ul`, real parameter types.
  const std::pair<size_t, size_t> kPairs[] = {{22, 30}, {103, 121}, {166, 216}};
  for (auto [x, y] : kPairs) {
    std::string a = Line(kAten, x), b = Line(kAten, y);
    EXPECT_NE(a, b);
    EXPECT_EQ(NormalizedName(a), NormalizedName(b)) << "lines " << x << " and " << y;
  }
  EXPECT_EQ(NormalizedName(Line(kAten, 22)),
            "at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add<c10::BFloat16>,std::array<char*>>");
}

TEST(NormalizedName, EveryNsightStyleNameWithAKinetoTwinMatchesIt) {
  // Over the whole file: names in Nsight style (placeholder parameters T1/T2)
  // either have a kineto twin that normalises equal, or none at all; no two
  // kineto-style names of different dtype collapse.
  std::vector<std::string> names = Names(kAten);
  std::set<std::string> kineto_keys;
  for (const auto& n : names) {
    if (n.find("T2") == std::string::npos && n.find("T1") == std::string::npos) kineto_keys.insert(NormalizedName(n));
  }
  int twins = 0;
  for (const auto& n : names) {
    if (n.find("(int, T2, T3)") != std::string::npos || n.find("[lambda") != std::string::npos) {
      EXPECT_TRUE(kineto_keys.count(NormalizedName(n))) << n;
      ++twins;
    }
  }
  EXPECT_EQ(twins, 3);
  // bf16 and float kernels of one op never share a key.
  for (const auto& n : names) {
    std::string key = NormalizedName(n);
    if (n.find("c10::BFloat16") != std::string::npos) {
      EXPECT_NE(key.find("BFloat16"), std::string::npos) << n;
    }
  }
}

TEST(NormalizedName, AnonymousNamespaceSpellings) {
  EXPECT_EQ(NormalizedName("void (anonymous namespace)::softmax_warp_forward<float, float, float, 1, false, false>"
                           "(float*, float const*, int, int, int, bool const*, int, bool)"),
            NormalizedName("void <unnamed>::softmax_warp_forward<float, float, float, (int)1, (bool)0, (bool)0>"
                           "(T2 *, const T1 *, int, int, int, const bool *, int, bool)"));
  EXPECT_EQ(NormalizedName("void <unnamed>::k<(bool)1>(T1 *)"), "{anon}::k<true>");
}

TEST(NormalizedName, VectorWidthsAndHelperTypesDropped) {
  std::vector<std::string> names = Names(kAten);
  // Lines 35 and 225: the same op with vector width 4 vs 8; 31/39 likewise.
  EXPECT_EQ(NormalizedName(Line(kAten, 31)), NormalizedName(Line(kAten, 39)));
  EXPECT_NE(Line(kAten, 31), Line(kAten, 39));
  EXPECT_EQ(NormalizedName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                           "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
            NormalizedName("void at::native::vectorized_elementwise_kernel<2, at::native::FillFunctor<float>, "
                           "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"));
  // An element size that is the only template argument is kept.
  EXPECT_NE(NormalizedName("void at::native::k<at::native::OpaqueType<4> >(int)"),
            NormalizedName("void at::native::k<at::native::OpaqueType<8> >(int)"));
  // Different dtypes stay apart.
  EXPECT_NE(NormalizedName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int)"),
            NormalizedName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, std::array<char*, 1ul> >(int)"));
}

TEST(NormalizedName, A100AndV100StepsAgreeOnAtenAndFbgemmKernels) {
  std::vector<std::string> a = Names("6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt");
  std::vector<std::string> b = Names("6b_seq_trainstep_recsys_V100_rank1of2_fullstep_fullnames.txt");
  ASSERT_EQ(a.size(), 1428u);
  ASSERT_EQ(b.size(), 1555u);
  std::set<std::string> raw_a(a.begin(), a.end()), raw_b(b.begin(), b.end());
  std::set<std::string> norm_b;
  for (const auto& n : b) norm_b.insert(NormalizedName(n));
  // fbgemm's embedding kernels carry the table count (2ul on one, 5ul on the
  // other): raw names differ, normalised names agree.
  int fbgemm = 0;
  for (const auto& n : raw_a) {
    if (n.find("split_embedding") == std::string::npos || raw_b.count(n)) continue;
    EXPECT_TRUE(norm_b.count(NormalizedName(n))) << n;
    ++fbgemm;
  }
  EXPECT_EQ(fbgemm, 3);
  // Every ATen kernel name shared by both runs keeps one key; distinct raw
  // ATen names with distinct dtypes do not merge.
  int shared = 0;
  for (const auto& n : raw_a) {
    if (n.rfind("void at::native", 0) == 0 && raw_b.count(n)) {
      EXPECT_TRUE(norm_b.count(NormalizedName(n)));
      ++shared;
    }
  }
  EXPECT_GT(shared, 50);
}

TEST(NormalizedName, InductorCountersStripped) {
  EXPECT_EQ(NormalizedName("triton_poi_fused_add_mul_3"), "triton_poi_fused_add_mul");
  EXPECT_EQ(NormalizedName("triton_poi_fused_add_mul_67"), "triton_poi_fused_add_mul");
  EXPECT_EQ(NormalizedName("triton_poi_fused_11"), NormalizedName("triton_poi_fused_24"));
  EXPECT_EQ(NormalizedName("triton_poi_fused_zeros_26"), NormalizedName("triton_poi_fused_zeros_51"));
  EXPECT_NE(NormalizedName("triton_poi_fused_zeros_26"), NormalizedName("triton_poi_fused_full_33"));
  // Over the real file: every Inductor name loses exactly its counter.
  int checked = 0;
  for (const auto& n : Names("4_triton_inductor_kernels.txt")) {
    if (n.rfind("triton__", 0) == 0) continue;
    std::string key = NormalizedName(n);
    ASSERT_LT(key.size(), n.size()) << n;
    EXPECT_EQ(n.substr(0, key.size()), key);
    EXPECT_EQ(n[key.size()], '_');
    EXPECT_TRUE(std::all_of(n.begin() + key.size() + 1, n.end(), ::isdigit)) << n;
    ++checked;
  }
  EXPECT_GT(checked, 250);
}

TEST(NormalizedName, EarlyTritonSignatureSuffixesCanonicalised) {
  EXPECT_EQ(NormalizedName("triton__0d1d2d3d"), "triton__4args");
  EXPECT_EQ(NormalizedName("triton__0d1d23d"), "triton__4args");
  EXPECT_EQ(NormalizedName("triton__0d1d2d"), "triton__3args");
  EXPECT_EQ(NormalizedName("triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14"), "triton__15args");
}

TEST(NormalizedName, MangledAndPrintedNcclAgree) {
  std::vector<std::string> n = Names("5_nccl_kernels.txt");
  ASSERT_GE(n.size(), 3u);
  EXPECT_EQ(NormalizedName(n[0]), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");  // _Z40ncclDevKernel...
  EXPECT_EQ(NormalizedName(n[0]), NormalizedName(n[1]));  // (unsigned long)4096
  EXPECT_EQ(NormalizedName(n[1]), NormalizedName(n[2]));  // 4096ul
}

TEST(NormalizedName, DebugModeKeys) {
  EXPECT_EQ(NormalizedName("layers.1/op_1_add"), "layers.1/add");
  EXPECT_EQ(NormalizedName("FSDPLlama3Model.layers.0.x/op_3_mm"), "layers.0.x/mm");
  EXPECT_EQ(NormalizedName("FSDPLlama3Model.layers.0.x/op_3_mm"), NormalizedName("layers.0.x/op_7_mm"));
  EXPECT_EQ(NormalizedName("layers.0.attention.wq/op_12_mm"), "layers.0.attention.wq/mm");
}

TEST(KernelFamily, GemmAttentionNcclOnRealNames) {
  for (const auto& n : Names("2_gemm_kernels.txt")) EXPECT_EQ(KernelFamily(n), "gemm") << n;
  for (const auto& n : Names("3_attention_kernels.txt")) EXPECT_EQ(KernelFamily(n), "attention") << n;
  std::vector<std::string> nccl = Names("5_nccl_kernels.txt");
  EXPECT_EQ(KernelFamily(nccl[0]), "nccl:AllReduce");
  EXPECT_EQ(KernelFamily("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "nccl:ReduceScatter");
  EXPECT_EQ(KernelFamily("ncclSymkDevKernel_AllGather_LL"), "nccl:AllGather");
  EXPECT_EQ(KernelFamily("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"), "nccl:SendRecv");
  // The GEMMs the A100 and the V100 pick for one model are one family.
  EXPECT_EQ(KernelFamily("volta_sgemm_128x32_nn"), "gemm");
  EXPECT_EQ(KernelFamily("ampere_sgemm_64x64_nn"), "gemm");
  EXPECT_EQ(KernelFamily("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
                         "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)"), "gemm");
  // ATen and fbgemm kernels are their own family (their normalised name).
  std::string add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
  EXPECT_EQ(KernelFamily(add), NormalizedName(add));
  EXPECT_NE(KernelFamily("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)"), "gemm");
  for (const auto& n : Names(kAten)) EXPECT_NE(KernelFamily(n), "gemm") << n;
}

TEST(ShortName, ReadableForms) {
  EXPECT_EQ(ShortName("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
                      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"),
            "at::native::vectorized_elementwise_kernel<...>");
  EXPECT_EQ(ShortName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
                      "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)"),
            "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>");
  EXPECT_EQ(ShortName("void (anonymous namespace)::softmax_warp_forward<float, float, float, 1, false, false>(float*)"),
            "softmax_warp_forward<...>");
  EXPECT_EQ(ShortName("_Z3fooPf"), "foo");
  EXPECT_EQ(ShortName("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(ShortName("volta_sgemm_128x32_nn"), "volta_sgemm_128x32_nn");
  for (const auto& n : Names(kAten)) {
    std::string s = ShortName(n);
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.find('('), std::string::npos) << n;
    EXPECT_LT(s.size(), 120u) << n;
  }
}

}  // namespace
}  // namespace numtrace
