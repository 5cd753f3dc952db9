// File: test/shim/engine/dtypes/dtype_inference_test.cc
//
// Dtype inference on every distinct real kernel name (expected_dtypes.tsv,
// reviewed by hand), plus the spellings that break naive readers: nested
// templates, both anonymous-namespace spellings, Nsight casts and lambdas,
// mangled input, complex and fp8 types; and ParseDTypeList.
#include "shim/engine/dtype_inference.h"
#include "test/util/test_paths.h"

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/util/kernel_names.h"

namespace numtrace::shim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

struct Expected {
  std::string name;
  DType dtype;
  int line;
};

std::vector<Expected> ReadExpected() {
  std::vector<Expected> rows;
  std::string path = std::string(NUMTRACE_SOURCE_DIR) + "/test/shim/engine/dtypes/expected_dtypes.tsv";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.rfind('\t');
    DType t;
    if (tab == std::string::npos || !ParseDType(line.substr(tab + 1), &t)) {
      ADD_FAILURE() << path << ":" << n << ": expected name<TAB>dtype";
      continue;
    }
    rows.push_back({line.substr(0, tab), t, n});
  }
  return rows;
}

// Every distinct name of test/data/kernel-names; `launches` counts each name
// once per launch in the step files (6a-6c), once per line elsewhere.
std::vector<std::string> ReadRealNames(std::map<std::string, int>* launches) {
  const char* files[] = {"1_aten_eager_kernels.txt", "2_gemm_kernels.txt",
                         "3_attention_kernels.txt", "4_triton_inductor_kernels.txt",
                         "5_nccl_kernels.txt", "extra_cudnn_conv_kernels.txt",
                         "extra_other_kernels.txt",
                         "6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt",
                         "6b_seq_trainstep_recsys_V100_rank1of2_fullstep_fullnames.txt",
                         "6c_seq_trainstep_compiled_A100_rank0of16_fullstep_fullnames.txt"};
  std::set<std::string> names;
  for (const char* f : files) {
    for (const std::string& name : numtrace::testing::LoadKernelNames(f)) {
      names.insert(name);
      ++(*launches)[name];
    }
  }
  return {names.begin(), names.end()};
}

TEST(DTypeInferenceTest, RealNamesMatchReviewedExpectations) {
  std::vector<Expected> rows = ReadExpected();
  ASSERT_GE(rows.size(), 300u);
  int wrong = 0;
  std::map<DType, int> per_dtype;
  for (const Expected& row : rows) {
    KernelDTypes got = InferKernelDTypes(row.name);
    ++per_dtype[row.dtype];
    // raw always means "nothing known", so its source is default.
    DTypeSource want_source = row.dtype == DType::kRaw ? DTypeSource::kDefault : DTypeSource::kName;
    if (got.primary != row.dtype || got.source != want_source) {
      if (++wrong <= 20) {
        ADD_FAILURE() << "line " << row.line << ": got " << DTypeName(got.primary) << "/"
                      << DTypeSourceName(got.source) << ", want " << DTypeName(row.dtype)
                      << " for " << row.name.substr(0, 200);
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  // Every category of the data set is represented.
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64, DType::kF8E4M3,
                  DType::kI64, DType::kI32, DType::kU8, DType::kBool, DType::kRaw}) {
    EXPECT_GT(per_dtype[t], 0) << DTypeName(t);
  }
}

TEST(DTypeInferenceTest, ExpectationsCoverEveryRealNameAndReportCounts) {
  std::map<std::string, int> launches;
  std::vector<std::string> names = ReadRealNames(&launches);
  ASSERT_GT(names.size(), 900u);
  std::set<std::string> expected;
  for (const Expected& row : ReadExpected()) expected.insert(row.name);
  std::map<DType, int> distinct, weighted;
  for (const std::string& name : names) {
    EXPECT_TRUE(expected.count(name)) << "not in expected_dtypes.tsv: " << name.substr(0, 200);
    DType t = InferKernelDTypes(name).primary;
    ++distinct[t];
    weighted[t] += launches[name];
  }
  std::ostringstream report;
  report << "dtype counts over " << names.size() << " distinct real names (lines/launches):";
  for (auto [t, n] : distinct) report << " " << DTypeName(t) << "=" << n << "/" << weighted[t];
  std::cout << report.str() << "\n";
  // Triton names (no dtype by design) are most of the raw ones.
  EXPECT_LT(distinct[DType::kRaw], static_cast<int>(names.size()) / 2);
}

TEST(DTypeInferenceTest, AtenFunctorTakesFirstElementType) {
  KernelDTypes r = InferKernelDTypes(
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, "
      "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)");
  EXPECT_EQ(r.primary, DType::kBF16);
  EXPECT_EQ(r.source, DTypeSource::kName);
  EXPECT_TRUE(r.per_arg.empty());
}

TEST(DTypeInferenceTest, StorageTypeNotAccumulator) {
  KernelDTypes r = InferKernelDTypes(
      "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 3, "
      "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)");
  EXPECT_EQ(r.primary, DType::kBF16);
  EXPECT_THAT(r.per_arg, ElementsAre(Pair(5u, DType::kBool)));  // the mask
}

TEST(DTypeInferenceTest, NestedTemplatesAndScopeParametersAreSkipped) {
  // nan_to_num's scope function takes optional<double>; the lambda says float.
  KernelDTypes r = InferKernelDTypes(
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::nan_to_num_kernel_cuda(at::TensorIteratorBase&, c10::optional<double>, "
      "c10::optional<double>, c10::optional<double>)::{lambda()#1}::operator()() "
      "const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> "
      ">(int, at::native::nan_to_num_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
      "at::detail::Array<char*, 2>)");
  EXPECT_EQ(r.primary, DType::kF32);
  // Reductions nest the type three levels deep.
  EXPECT_EQ(InferKernelDTypes("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<"
                              "c10::Half, at::native::func_wrapper_t<c10::Half, "
                              "at::native::sum_functor<c10::Half, float, c10::Half> >, "
                              "unsigned int, c10::Half, 4> >(at::native::ReduceOp<c10::Half>)")
                .primary,
            DType::kF16);
}

TEST(DTypeInferenceTest, AnonymousNamespaceSpellingsAgree) {
  const char* kineto =
      "void (anonymous namespace)::softmax_warp_backward<c10::Half, c10::Half, float, 9, true, "
      "false>(c10::Half*, c10::Half const*, c10::Half const*, int, int, int, bool const*)";
  const char* nsight =
      "void <unnamed>::softmax_warp_backward<c10::Half, c10::Half, float, (int)9, (bool)1, "
      "(bool)0>(T2 *, const T1 *, const T1 *, int, int, int, const bool *)";
  KernelDTypes a = InferKernelDTypes(kineto), b = InferKernelDTypes(nsight);
  EXPECT_EQ(a.primary, DType::kF16);
  EXPECT_EQ(b.primary, DType::kF16);
  EXPECT_EQ(a.per_arg, b.per_arg);  // T1/T2 resolve to the template arguments
  EXPECT_THAT(b.per_arg, ElementsAre(Pair(6u, DType::kBool)));
}

TEST(DTypeInferenceTest, LoopIndexLambdaIsNoElementType) {
  // The functor names nothing; the {lambda(int)#1} is gpu_kernel_impl's index.
  EXPECT_EQ(InferKernelDTypes("void at::native::elementwise_kernel<128, 4, "
                              "at::native::gpu_kernel_impl_nocast<at::native::FooFunctor>("
                              "at::TensorIteratorBase&, at::native::FooFunctor const&)::"
                              "{lambda(int)#1}>(int, at::native::FooFunctor)")
                .source,
            DTypeSource::kDefault);
  EXPECT_EQ(InferKernelDTypes("void at::native::elementwise_kernel<(int)128, (int)4, void "
                              "at::native::gpu_kernel_impl_nocast<at::native::FooFunctor>("
                              "at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]"
                              ">(int, T3)")
                .primary,
            DType::kRaw);
  // A lambda of an int tensor op is an element type.
  EXPECT_EQ(InferKernelDTypes("void at::native::vectorized_elementwise_kernel<4, "
                              "at::native::neg_kernel_cuda(at::TensorIteratorBase&)::"
                              "{lambda()#2}::operator()() const::{lambda(int)#1}, "
                              "std::array<char*, 2ul> >(int)")
                .primary,
            DType::kI32);
}

TEST(DTypeInferenceTest, MangledNamesAreDemangled) {
  KernelDTypes r = InferKernelDTypes(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5"
      "arrayIPcLm3EEEEviT0_T1_");
  EXPECT_EQ(r.primary, DType::kBF16);
  EXPECT_EQ(r.source, DTypeSource::kName);
  // complex<float> is measured as f32 pairs; the long index tensor is arg 2.
  KernelDTypes c = InferKernelDTypes(
      "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIN3c107complexIfEElEEvPT_PKS6_PKT0_");
  EXPECT_EQ(c.primary, DType::kF32);
  EXPECT_THAT(c.per_arg, ElementsAre(Pair(2u, DType::kI64)));
  // Truncated beyond demangling: the source names still hold the type.
  EXPECT_EQ(InferKernelDTypes("_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemm"
                              "ConvolutionINS1_11threadblock9GemmShapeILi128ELi128ELi32EEENS_"
                              "10tfloat32_tENS_9transf")
                .primary,
            DType::kF32);
}

TEST(DTypeInferenceTest, ComplexAndFp8Types) {
  EXPECT_EQ(InferKernelDTypes("void k<c10::complex<double> >(c10::complex<double>*)").primary,
            DType::kF64);
  EXPECT_EQ(InferKernelDTypes("void k<c10::complex<c10::Half> >(int)").primary, DType::kF16);
  KernelDTypes q = InferKernelDTypes(
      "void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>("
      "c10::Float8_e4m3fn*, c10::BFloat16 const*, float const*, int, long, long)");
  EXPECT_EQ(q.primary, DType::kBF16);
  EXPECT_THAT(q.per_arg, ElementsAre(Pair(0u, DType::kF8E4M3), Pair(2u, DType::kF32)));
  EXPECT_EQ(InferKernelDTypes("void k<c10::Float8_e5m2>(int)").primary, DType::kF8E5M2);
  EXPECT_EQ(InferKernelDTypes("void k<cutlass::float_e4m3_t, float>(int)").primary,
            DType::kF8E4M3);
  // fnuz fp8 decodes differently from the OCP formats: not measured as fp8.
  EXPECT_EQ(InferKernelDTypes("void k<c10::Float8_e4m3fnuz, float>(int)").primary, DType::kRaw);
}

TEST(DTypeInferenceTest, GemmTokens) {
  struct Case {
    const char* name;
    DType want;
  } cases[] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel", DType::kBF16},
      {"sm89_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize64x64x64_kernel", DType::kBF16},
      {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_kernel", DType::kF8E4M3},
      {"sm90_xmma_gemm_e5m2bf16_e5m2f32_f32_tn_n_kernel", DType::kBF16},
      {"volta_h884gemm_64x64_ldg8_nn", DType::kF16},
      {"turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", DType::kF16},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align4>(T1::Params)",
       DType::kF32},
      {"ampere_dgemm_64x64_nn", DType::kF64},
      {"cutlass_80_tensorop_i16832gemm_s8_128x64_tn", DType::kI8},
      {"sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_kernel", DType::kF32},
      {"nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN", DType::kF16},
      {"nvjet_sm100_sss_128x64_TNT", DType::kF32},
      {"nvjet_qqtst_128x256_TNT", DType::kRaw},  // fp8 code not known: raw
      {"bmm_E2m1_E2m1E2m1_Fp32_t128x16", DType::kRaw},  // packed fp4
  };
  for (const Case& c : cases) {
    EXPECT_EQ(InferKernelDTypes(c.name).primary, c.want) << c.name;
  }
}

TEST(DTypeInferenceTest, CublasTakesOutputDescriptor) {
  // The first float is the compute type; the tensors are half.
  EXPECT_EQ(InferKernelDTypes("void gemmk1_kernel<float, 256, 5, false, false, false, false, "
                              "cublasGemvTensorStridedBatched<__half const>, "
                              "cublasGemvTensorStridedBatched<__half const>, "
                              "cublasGemvTensorStridedBatched<__half>, float, true, true>(int)")
                .primary,
            DType::kF16);
}

TEST(DTypeInferenceTest, NcclNames) {
  EXPECT_EQ(InferKernelDTypes("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<"
                              "4096ul>)")
                .primary,
            DType::kBF16);
  EXPECT_EQ(InferKernelDTypes("ncclKernel_Reduce_RING_LL_Sum_uint8_t").primary, DType::kU8);
  EXPECT_EQ(InferKernelDTypes("ncclDevKernel_ReduceScatter_Sum_f8e5m2_RING_LL").primary,
            DType::kF8E5M2);
  KernelDTypes gather = InferKernelDTypes("ncclKernel_AllGather_RING_LL_Sum_int8_t");
  EXPECT_EQ(gather.primary, DType::kRaw);  // bytes moved, not int8 values
  EXPECT_EQ(gather.source, DTypeSource::kDefault);
}

TEST(DTypeInferenceTest, IndexArgumentsAndConversions) {
  KernelDTypes g = InferKernelDTypes(
      "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
      "long, long, bool)");
  EXPECT_EQ(g.primary, DType::kRaw);
  EXPECT_THAT(g.per_arg, ElementsAre(Pair(2u, DType::kI64)));
  KernelDTypes idx = InferKernelDTypes(
      "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
      "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
      "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
      "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
      "int, long)");
  EXPECT_EQ(idx.primary, DType::kBF16);
  EXPECT_THAT(idx.per_arg, ElementsAre(Pair(2u, DType::kI64)));
  EXPECT_EQ(InferKernelDTypes("void at::native::vectorized_elementwise_kernel<4, "
                              "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::"
                              "{lambda(float)#1}, std::array<char*, 2ul> >(int)")
                .primary,
            DType::kBF16);
  // where(bool, long, long) writes longs: bool is the weakest type.
  EXPECT_EQ(InferKernelDTypes("void at::native::vectorized_elementwise_kernel<4, "
                              "at::native::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::"
                              "{lambda(bool, long, long)#1}, at::detail::Array<char*, 4> >(int)")
                .primary,
            DType::kI64);
}

TEST(DTypeInferenceTest, SfinaeReturnTypeIsNotTheKernel) {
  KernelDTypes r = InferKernelDTypes(
      "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::Half>::exists, void>::type "
      "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*)");
  EXPECT_EQ(r.primary, DType::kBF16);
  EXPECT_TRUE(r.per_arg.empty());
}

TEST(DTypeInferenceTest, BadNamesGiveRawWithoutCrashing) {
  for (const char* bad : {"", " ", "_Z", "_ZN", "foo<<<(((", ">>>)))]]}", "void (", "k<T9>(T9*)",
                          "_ZN3foo999999999999999999999x", "void k<(int)>(T0 *, T1 *)"}) {
    KernelDTypes r = InferKernelDTypes(bad);
    EXPECT_EQ(r.primary, DType::kRaw) << bad;
    EXPECT_EQ(r.source, DTypeSource::kDefault) << bad;
  }
  EXPECT_EQ(InferKernelDTypes("triton_poi_fused_add_mul_0").source, DTypeSource::kDefault);
  EXPECT_EQ(InferKernelDTypes(std::string(100000, '<')).primary, DType::kRaw);
}

TEST(ParseDTypeListTest, Good) {
  std::vector<DType> v;
  std::string error;
  ASSERT_TRUE(ParseDTypeList("bf16,bf16,f32,i64", &v, &error)) << error;
  EXPECT_THAT(v, ElementsAre(DType::kBF16, DType::kBF16, DType::kF32, DType::kI64));
  ASSERT_TRUE(ParseDTypeList(" f8e4m3 , raw,bool ", &v, &error)) << error;
  EXPECT_THAT(v, ElementsAre(DType::kF8E4M3, DType::kRaw, DType::kBool));
  ASSERT_TRUE(ParseDTypeList("u8", &v, &error));
  EXPECT_THAT(v, ElementsAre(DType::kU8));
}

TEST(ParseDTypeListTest, Bad) {
  std::vector<DType> v = {DType::kF32};
  std::string error;
  EXPECT_FALSE(ParseDTypeList("", &v, &error));
  EXPECT_THAT(error, HasSubstr("empty"));
  EXPECT_TRUE(v.empty());
  EXPECT_FALSE(ParseDTypeList("bf16,fp32,i64", &v, &error));
  EXPECT_THAT(error, HasSubstr("entry 2 \"fp32\" is not a dtype"));
  EXPECT_TRUE(v.empty());
  EXPECT_FALSE(ParseDTypeList("bf16,,f32", &v, &error));
  EXPECT_THAT(error, HasSubstr("entry 2 is empty"));
  EXPECT_FALSE(ParseDTypeList("bf16,", &v, &error));
  EXPECT_THAT(error, HasSubstr("entry 2 is empty"));
  EXPECT_FALSE(ParseDTypeList("BF16", &v, &error));  // names are lowercase in the format
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace numtrace::shim
