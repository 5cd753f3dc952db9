// File: test/shim/cupti/launch_decoder_test.cc
//
// Launch decoding from fake callback data built with the real parameter
// structs of generated_cuda_meta.h: parameter packing (scalars, pointers,
// struct parameters, `extra` buffers), stream resolution, _ptsz ids.
#include "shim/cupti/launch_decoder.h"

#include <cuda.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <vector>

namespace numtrace::shim {
namespace {

// A kernel f(float* out, int n, Pair p, const half* in) with an 8-byte
// aligned 16-byte struct: offsets 0, 8, 16, 32.
struct Pair {
  uint64_t a;
  double b;
};

KernelDescription FourParams() {
  KernelDescription k;
  k.name = "_Z1fPfi4PairPK6__half";
  k.layout = {{0, 8}, {8, 4}, {16, 16}, {32, 8}};
  k.param_bytes = ParamBytes(k.layout);
  return k;
}

struct Args {
  uint64_t out = 0x7f0000001000;
  int n = 4096;
  Pair p{0x7f0000002000, 2.5};
  uint64_t in = 0x7f0000003000;
  void* ptrs[4] = {&out, &n, &p, &in};
};

template <typename T>
T Read(const std::vector<uint8_t>& bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

TEST(LaunchDecoder, PacksKernelParamsAtLayoutOffsets) {
  Args a;
  cuLaunchKernel_params p{};
  p.f = reinterpret_cast<CUfunction>(0x1234);
  p.gridDimX = 80; p.gridDimY = 2; p.gridDimZ = 1;
  p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1;
  p.hStream = reinterpret_cast<CUstream>(0x5555);
  p.kernelParams = a.ptrs;
  auto args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p);
  ASSERT_TRUE(args.has_value());
  KernelDescription k = FourParams();
  ASSERT_EQ(k.param_bytes, 40u);
  std::vector<uint8_t> bytes(k.param_bytes, 0xAB);
  ASSERT_EQ(PackParams(*args, k.layout, bytes), PackResult::kOk);
  EXPECT_EQ(Read<uint64_t>(bytes, 0), a.out);
  EXPECT_EQ(Read<int>(bytes, 8), 4096);
  EXPECT_EQ(Read<uint32_t>(bytes, 12), 0u) << "padding is zeroed";
  EXPECT_EQ(Read<uint64_t>(bytes, 16), a.p.a) << "a pointer inside a struct parameter";
  EXPECT_EQ(Read<double>(bytes, 24), 2.5);
  EXPECT_EQ(Read<uint64_t>(bytes, 32), a.in);

  LaunchEvent e = MakeLaunchEvent(*args, k, "_Z1fv_symbol", bytes, 0xC0, 3, true);
  EXPECT_EQ(e.symbol, "_Z1fv_symbol");
  EXPECT_EQ(e.function, 0x1234u);
  EXPECT_EQ(e.grid, (std::array<uint32_t, 3>{80, 2, 1}));
  EXPECT_EQ(e.block, (std::array<uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(e.stream, 0x5555u);
  EXPECT_EQ(e.context, 0xC0u);
  EXPECT_EQ(e.device, 3);
  EXPECT_TRUE(e.stream_capturing);
  EXPECT_EQ(e.layout.size(), 4u);
  EXPECT_EQ(e.params.size(), 40u);
}

TEST(LaunchDecoder, FallsBackToDriverNameWhenSymbolMissing) {
  Args a;
  cuLaunchKernel_params p{};
  p.kernelParams = a.ptrs;
  auto args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p);
  KernelDescription k = FourParams();
  EXPECT_EQ(MakeLaunchEvent(*args, k, nullptr, {}, 0, 0, false).symbol, k.name);
  EXPECT_EQ(MakeLaunchEvent(*args, k, "", {}, 0, 0, false).symbol, k.name);
}

TEST(LaunchDecoder, ReadsExtraPackedBuffer) {
  Args a;
  std::vector<uint8_t> packed(40, 0);
  std::memcpy(packed.data() + 0, &a.out, 8);
  std::memcpy(packed.data() + 8, &a.n, 4);
  std::memcpy(packed.data() + 16, &a.p, 16);
  std::memcpy(packed.data() + 32, &a.in, 8);
  size_t size = packed.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &size, CU_LAUNCH_PARAM_END};
  cuLaunchKernel_ptsz_params p{};
  p.extra = extra;
  auto args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &p);
  ASSERT_TRUE(args.has_value());
  EXPECT_TRUE(args->per_thread);
  KernelDescription k = FourParams();
  std::vector<uint8_t> bytes(k.param_bytes);
  ASSERT_EQ(PackParams(*args, k.layout, bytes), PackResult::kOk);
  EXPECT_EQ(bytes, packed);

  // Shorter than the layout: copy what is there, never read past it, and
  // say how much is valid (the switchboard hands on only those bytes;
  // callback_switchboard_test has NCCL's real one-4-KiB-parameter layout).
  size = 16;
  uint32_t valid = 0;
  EXPECT_EQ(PackParams(*args, k.layout, bytes, &valid), PackResult::kShort);
  EXPECT_EQ(valid, 16u);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + 16, packed.begin()));
  EXPECT_TRUE(std::all_of(bytes.begin() + 16, bytes.end(), [](uint8_t b) { return b == 0; }));
  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed.data(), CU_LAUNCH_PARAM_END};
  p.extra = no_size;
  args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &p);
  EXPECT_EQ(PackParams(*args, k.layout, bytes), PackResult::kFailed);
}

TEST(LaunchDecoder, RefusesShortOutputAndMissingParams) {
  cuLaunchKernel_params p{};
  auto args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p);
  KernelDescription k = FourParams();
  std::vector<uint8_t> small(8);
  EXPECT_EQ(PackParams(*args, k.layout, small), PackResult::kFailed);
  std::vector<uint8_t> bytes(k.param_bytes);
  EXPECT_EQ(PackParams(*args, k.layout, bytes), PackResult::kFailed) << "neither kernelParams nor extra";
  EXPECT_EQ(PackParams(*args, {}, {}), PackResult::kOk) << "a kernel without parameters";
}

TEST(LaunchDecoder, LaunchKernelExReadsConfig) {
  Args a;
  CUlaunchConfig cfg{};
  cfg.gridDimX = 7; cfg.gridDimY = 1; cfg.gridDimZ = 3;
  cfg.blockDimX = 128; cfg.blockDimY = 4; cfg.blockDimZ = 1;
  cfg.hStream = nullptr;
  cuLaunchKernelEx_params p{};
  p.config = &cfg;
  p.f = reinterpret_cast<CUfunction>(0x99);
  p.kernelParams = a.ptrs;
  auto args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &p);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->grid, (std::array<uint32_t, 3>{7, 1, 3}));
  EXPECT_EQ(args->block, (std::array<uint32_t, 3>{128, 4, 1}));
  EXPECT_EQ(ResolveStream(args->raw_stream, args->per_thread), 0x1u) << "NULL plain -> legacy";

  cuLaunchKernelEx_ptsz_params q{};
  q.config = &cfg;
  q.kernelParams = a.ptrs;
  args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &q);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(ResolveStream(args->raw_stream, args->per_thread), 0x2u) << "NULL _ptsz -> per-thread";

  q.config = nullptr;
  EXPECT_FALSE(ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &q).has_value());
}

TEST(LaunchDecoder, CooperativeLaunchHasNoExtra) {
  Args a;
  cuLaunchCooperativeKernel_ptsz_params p{};
  p.gridDimX = 132; p.gridDimY = 1; p.gridDimZ = 1;
  p.blockDimX = 1024; p.blockDimY = 1; p.blockDimZ = 1;
  p.kernelParams = a.ptrs;
  auto args = ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, &p);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->extra, nullptr);
  EXPECT_EQ(args->grid[0], 132u);
  EXPECT_TRUE(args->per_thread);
}

TEST(LaunchDecoder, StreamResolution) {
  EXPECT_EQ(ResolveStream(0, false), reinterpret_cast<uint64_t>(CU_STREAM_LEGACY));
  EXPECT_EQ(ResolveStream(0, true), reinterpret_cast<uint64_t>(CU_STREAM_PER_THREAD));
  EXPECT_EQ(ResolveStream(0x1, true), 0x1u) << "explicit legacy stays legacy under _ptsz";
  EXPECT_EQ(ResolveStream(0x2, false), 0x2u) << "explicit per-thread stays per-thread";
  EXPECT_EQ(ResolveStream(0xdeadbeef, true), 0xdeadbeefu);
}

TEST(LaunchDecoder, IdClassification) {
  EXPECT_TRUE(IsKernelLaunchId(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_TRUE(IsKernelLaunchId(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz));
  EXPECT_FALSE(IsKernelLaunchId(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch));
  EXPECT_FALSE(IsKernelLaunchId(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2));
  EXPECT_TRUE(IsPerThreadId(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz));
  EXPECT_FALSE(IsPerThreadId(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  cuLaunchKernel_params p{};
  EXPECT_FALSE(ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &p).has_value());
  EXPECT_FALSE(ExtractLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, nullptr).has_value());
}

TEST(LaunchDecoder, GraphLaunch) {
  cuGraphLaunch_params p{reinterpret_cast<CUgraphExec>(0x77), nullptr};
  auto g = ExtractGraphLaunch(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &p);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->graph_exec, 0x77u);
  EXPECT_EQ(g->stream, 0x1u);
  cuGraphLaunch_ptsz_params q{reinterpret_cast<CUgraphExec>(0x78), nullptr};
  g = ExtractGraphLaunch(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, &q);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->stream, 0x2u);
  EXPECT_FALSE(ExtractGraphLaunch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p).has_value());
}

}  // namespace
}  // namespace numtrace::shim
