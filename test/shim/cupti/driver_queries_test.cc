// File: test/shim/cupti/driver_queries_test.cc
//
// LiveDriverQueries over a DriverApi table of fake functions: parameter
// iteration ends at CUDA_ERROR_INVALID_VALUE, CUkernel handles fall back to
// the cuKernel* queries, broken handles give no layout.
#include "shim/driver/driver_queries.h"

#include <gtest/gtest.h>

#include "shim/driver/driver_api.h"

namespace numtrace::shim {
namespace {

constexpr uint64_t kFunction = 0x100, kKernel = 0x200, kBroken = 0x300, kNoParams = 0x400;
// A CUkernel the function query answers with INVALID_VALUE at index 0 (as
// for a kernel without parameters) instead of a handle-kind error.
constexpr uint64_t kKernelQuiet = 0x500;
// A CUkernel without parameters (the kernel query answers INVALID_VALUE at 0).
constexpr uint64_t kKernelNoParams = 0x600;
int g_kernel_queries = 0, g_func_queries = 0;

CUresult FakeFuncParamInfo(CUfunction f, size_t i, size_t* off, size_t* size) {
  ++g_func_queries;
  if (reinterpret_cast<uint64_t>(f) == kNoParams || reinterpret_cast<uint64_t>(f) == kKernelQuiet) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (reinterpret_cast<uint64_t>(f) != kFunction) return CUDA_ERROR_INVALID_HANDLE;
  if (i >= 3) return CUDA_ERROR_INVALID_VALUE;
  *off = i * 8;
  *size = 8;
  return CUDA_SUCCESS;
}
CUresult FakeKernelParamInfo(CUkernel k, size_t i, size_t* off, size_t* size) {
  ++g_kernel_queries;
  const uint64_t h = reinterpret_cast<uint64_t>(k);
  if (h == kKernelNoParams) return CUDA_ERROR_INVALID_VALUE;
  if (h != kKernel && h != kKernelQuiet) return CUDA_ERROR_INVALID_HANDLE;
  if (i >= 2) return CUDA_ERROR_INVALID_VALUE;
  *off = i * 16;
  *size = 16;
  return CUDA_SUCCESS;
}
CUresult FakeFuncName(const char** name, CUfunction) { *name = "func_name"; return CUDA_SUCCESS; }
CUresult FakeKernelName(const char** name, CUkernel) { *name = "kernel_name"; return CUDA_SUCCESS; }
CUresult FakeIsCapturing(CUstream s, CUstreamCaptureStatus* st) {
  if (reinterpret_cast<uint64_t>(s) == 0x9) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  *st = reinterpret_cast<uint64_t>(s) == 0x2 ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                             : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

DriverApi QueriesFakeApi() {
  DriverApi api;
  api.cuFuncGetParamInfo = &FakeFuncParamInfo;
  api.cuKernelGetParamInfo = &FakeKernelParamInfo;
  api.cuFuncGetName = &FakeFuncName;
  api.cuKernelGetName = &FakeKernelName;
  api.cuStreamIsCapturing = &FakeIsCapturing;
  return api;
}

TEST(LiveDriverQueries, FunctionLayout) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  KernelDescription k;
  ASSERT_TRUE(q.Describe(kFunction, HandleKind::kEither, &k));
  EXPECT_EQ(k.name, "func_name");
  ASSERT_EQ(k.layout.size(), 3u);
  EXPECT_EQ(k.layout[2].offset, 16u);
  EXPECT_EQ(k.param_bytes, 24u);
}

TEST(LiveDriverQueries, KernelHandleFallsBack) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  KernelDescription k;
  ASSERT_TRUE(q.Describe(kKernel, HandleKind::kEither, &k));
  EXPECT_EQ(k.name, "kernel_name");
  ASSERT_EQ(k.layout.size(), 2u);
  EXPECT_EQ(k.param_bytes, 32u);
}

TEST(LiveDriverQueries, EmptyLayoutIsAnAnswerNotAHandleKindError) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  KernelDescription k;
  g_kernel_queries = 0;
  ASSERT_TRUE(q.Describe(kNoParams, HandleKind::kEither, &k));
  EXPECT_TRUE(k.layout.empty());
  EXPECT_EQ(k.param_bytes, 0u);
  EXPECT_EQ(g_kernel_queries, 1) << "the kernel query is asked once and refuses the handle";
  EXPECT_EQ(k.name, "func_name");
}

// Fails before the fix: INVALID_VALUE at index 0 was taken as "no
// parameters" and every buffer of a CUkernel-launched kernel was lost.
TEST(LiveDriverQueries, KernelHandleAnsweredInvalidValueStillGetsItsLayout) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  KernelDescription k;
  ASSERT_TRUE(q.Describe(kKernelQuiet, HandleKind::kEither, &k));
  ASSERT_EQ(k.layout.size(), 2u);
  EXPECT_EQ(k.layout[1].offset, 16u);
  EXPECT_EQ(k.param_bytes, 32u);
  EXPECT_EQ(k.name, "kernel_name") << "named by the query that knew the handle";
}

// __cudaLaunchKernel's handle is a cudaKernel_t, i.e. a CUkernel: the
// function query is never given it (what it does with one is unsettled on
// hardware), with or without parameters. Fails before the fix: the function
// query was asked first for every handle.
TEST(LiveDriverQueries, AKnownKernelHandleIsNeverGivenToTheFunctionQuery) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  for (uint64_t h : {kKernel, kKernelQuiet, kKernelNoParams}) {
    g_func_queries = 0;
    KernelDescription k;
    ASSERT_TRUE(q.Describe(h, HandleKind::kKernel, &k)) << h;
    EXPECT_EQ(g_func_queries, 0) << h;
    EXPECT_EQ(k.name, "kernel_name") << h;
    EXPECT_EQ(k.layout.size(), h == kKernelNoParams ? 0u : 2u) << h;
  }
  KernelDescription k;
  EXPECT_FALSE(q.Describe(kBroken, HandleKind::kKernel, &k));
  EXPECT_TRUE(k.layout.empty());
}

TEST(LiveDriverQueries, BrokenHandleHasNoLayout) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  KernelDescription k;
  EXPECT_FALSE(q.Describe(kBroken, HandleKind::kEither, &k));
  EXPECT_TRUE(k.layout.empty());
}

TEST(LiveDriverQueries, Capturing) {
  DriverApi api = QueriesFakeApi();
  LiveDriverQueries q(api);
  EXPECT_TRUE(q.IsCapturing(0x2));
  EXPECT_FALSE(q.IsCapturing(0x1));
  // The legacy stream while another stream captures: enqueuing there would
  // invalidate that capture, so an unanswered query means "capturing".
  EXPECT_TRUE(q.IsCapturing(0x9));
}

}  // namespace
}  // namespace numtrace::shim
