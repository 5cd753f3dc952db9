// File: test/shim/cupti/runtime_decoder_test.cc
//
// Fallback decoding of the runtime witnesses from the real parameter
// structs of generated_cuda_runtime_api_meta.h: launch geometry, stream,
// arguments, which launches can be described by the driver, and the
// allocation events.
#include "shim/cupti/runtime_decoder.h"

#include <cupti.h>
#include <gtest/gtest.h>

namespace numtrace::shim {
namespace {

TEST(RuntimeDecoder, ClassicLaunchIsAHostStubWithoutLayout) {
  void* args[1] = {};
  cudaLaunchKernel_ptsz_v7000_params p{reinterpret_cast<const void*>(0x1234), dim3(2, 3, 4),
                                       dim3(32, 1, 1), args, 0, nullptr};
  auto l = ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, &p);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->handle, HandleKind::kNone);
  EXPECT_EQ(l->args.function, 0x1234u);
  EXPECT_EQ(l->args.grid, (std::array<uint32_t, 3>{2, 3, 4}));
  EXPECT_EQ(l->args.block[0], 32u);
  EXPECT_TRUE(l->args.per_thread);
  EXPECT_EQ(l->args.kernel_params, args);
}

TEST(RuntimeDecoder, LaunchExCReadsItsConfig) {
  cudaLaunchConfig_t c{};
  c.gridDim = dim3(8, 1, 1);
  c.blockDim = dim3(128, 1, 1);
  c.stream = reinterpret_cast<cudaStream_t>(0x55);
  cudaLaunchKernelExC_v11060_params p{&c, reinterpret_cast<const void*>(0x99), nullptr};
  auto l = ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, &p);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->args.grid[0], 8u);
  EXPECT_EQ(l->args.block[0], 128u);
  EXPECT_EQ(l->args.raw_stream, 0x55u);
  EXPECT_FALSE(l->args.per_thread);
  cudaLaunchKernelExC_v11060_params none{nullptr, nullptr, nullptr};
  EXPECT_FALSE(ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, &none));
}

TEST(RuntimeDecoder, DunderLaunchKernelCarriesACUkernel) {
  // Laid out like __cudaLaunchKernel's arguments (crt/device_functions.h).
  struct {
    cudaKernel_t kernel;
    dim3 grid, block;
    void** args;
    size_t shared;
    cudaStream_t stream;
  } p{reinterpret_cast<cudaKernel_t>(0xABC), dim3(1, 1, 1), dim3(64, 1, 1), nullptr, 0, nullptr};
  auto l = ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &p);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->handle, HandleKind::kKernel);
  EXPECT_EQ(l->args.function, 0xABCu);
  EXPECT_FALSE(ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &p)) << "not a launch";
  EXPECT_FALSE(ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, nullptr));
  p.block = dim3(2048, 1, 1);  // no launch has this: a misread struct
  EXPECT_FALSE(ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &p));
  p.block = dim3(64, 1, 1);
  p.grid = dim3(0, 1, 1);
  EXPECT_FALSE(ExtractRuntimeLaunch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &p));
}

TEST(RuntimeDecoder, AllocationsAndFrees) {
  void* ptr = reinterpret_cast<void*>(0x7000);
  cudaMalloc_v3020_params m{&ptr, 256};
  auto a = DecodeRuntimeAlloc(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &m, 2);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->address, 0x7000u);
  EXPECT_EQ(a->bytes, 256u);
  EXPECT_EQ(a->device, 2);
  EXPECT_EQ(a->kind, AllocKind::kPlain);
  cudaMallocFromPoolAsync_v11020_params pool{&ptr, 512, nullptr, nullptr};
  a = DecodeRuntimeAlloc(CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020, &pool, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->kind, AllocKind::kStreamOrdered);
  EXPECT_EQ(a->bytes, 512u);
  void* null_ptr = nullptr;
  cudaMalloc_v3020_params failed{&null_ptr, 256};
  EXPECT_FALSE(DecodeRuntimeAlloc(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &failed, 0));

  cudaFreeAsync_v11020_params f{ptr, nullptr};
  auto fr = DecodeRuntimeFree(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &f);
  ASSERT_TRUE(fr.has_value());
  EXPECT_EQ(fr->address, 0x7000u);
  EXPECT_EQ(fr->kind, AllocKind::kStreamOrdered);
  EXPECT_FALSE(DecodeRuntimeFree(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &m)) << "not a free";
  EXPECT_TRUE(IsRuntimeAllocId(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020));
  EXPECT_FALSE(IsRuntimeLaunchId(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020));
}

}  // namespace
}  // namespace numtrace::shim
