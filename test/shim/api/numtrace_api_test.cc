// Loads the built libnumtrace.so with dlopen (as Python's ctypes does) and
// checks its exported surface and the behaviour of an inactive library.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/version/version.h"
#include "shim/api/numtrace.h"

namespace {

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // No CUDA here: the library must load and stay inert.
    handle = dlopen(NUMTRACE_SO_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
  }
  template <typename F>
  static F Sym(const char* name) {
    return reinterpret_cast<F>(dlsym(handle, name));
  }
  static void* handle;
};
void* ApiTest::handle = nullptr;

TEST_F(ApiTest, VersionAndInactiveCalls) {
  auto version = Sym<const char* (*)()>("numtrace_version");
  ASSERT_NE(version, nullptr);
  EXPECT_STREQ(version(), numtrace::kVersion);  // the one definition, from CMake
  auto active = Sym<int (*)()>("numtrace_is_active");
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active(), 0);
  for (const char* name : {"numtrace_mark_step", "numtrace_capture_begin", "numtrace_capture_end",
                           "numtrace_pause", "numtrace_resume", "numtrace_resume"}) {
    auto fn = Sym<int (*)()>(name);
    ASSERT_NE(fn, nullptr) << name;
    EXPECT_EQ(fn(), 0) << name;  // nothing started: a harmless no-op
  }
}

TEST_F(ApiTest, AnnotateValidatesBeforeCudaStarts) {
  auto annotate = Sym<int (*)(const char*, const char*)>("numtrace_annotate_kernel");
  ASSERT_NE(annotate, nullptr);
  EXPECT_EQ(annotate("my_kernel", "bf16,bf16,f32,i64"), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(annotate("my_kernel", "bf16,half"), -1);
  EXPECT_EQ(annotate(nullptr, "f32"), -1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("'half'"), std::string::npos) << err;
}

TEST_F(ApiTest, ProvenanceCallsAreNoOpsWhileInactive) {
  auto push = Sym<int (*)(const char*)>("numtrace_scope_push");
  auto op_push = Sym<int (*)(const char*)>("numtrace_op_push");
  auto phase = Sym<int (*)(const char*)>("numtrace_set_phase");
  auto pop = Sym<int (*)()>("numtrace_scope_pop");
  auto op_pop = Sym<int (*)()>("numtrace_op_pop");
  ASSERT_TRUE(push && op_push && phase && pop && op_pop);
  // No CUDA: nothing is kept, so even an unmatched pop or a NULL is harmless.
  EXPECT_EQ(push("layers.0"), 0);
  EXPECT_EQ(push(nullptr), 0);
  EXPECT_EQ(op_push("aten::mm"), 0);
  EXPECT_EQ(phase("backward"), 0);
  EXPECT_EQ(phase("not-a-phase"), 0);
  EXPECT_EQ(pop(), 0);
  EXPECT_EQ(pop(), 0);
  EXPECT_EQ(op_pop(), 0);
}

TEST_F(ApiTest, StepCapturedIsAnsweredFromTheConfigurationBeforeCuda) {
  auto captured = Sym<int (*)(long long)>("numtrace_step_captured");
  ASSERT_NE(captured, nullptr);
  // The default NUMTRACE_STEPS=2 in mark mode (this test's environment sets none).
  EXPECT_EQ(captured(2), 1);
  EXPECT_EQ(captured(1), 0);
  EXPECT_EQ(captured(3), 0);
  EXPECT_EQ(captured(-1), 0);
  auto ops = Sym<int (*)(const char*, const char*)>("numtrace_annotate_kernel_ops");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops("triton_poi_fused_addmm_relu_0", "aten::addmm+aten::relu"), 1);  // kept for later launches
  EXPECT_EQ(ops(nullptr, "aten::mm"), -1);
  EXPECT_EQ(ops("k", ""), -1);
}

// The tensor map's calls come from inside PyTorch's allocator lock: without
// CUDA they must be harmless no-ops, whatever they are given.
TEST_F(ApiTest, TensorMapCallsAreNoOpsWhileInactive) {
  auto wanted = Sym<int (*)()>("numtrace_tensor_map_wanted");
  auto event = Sym<int (*)(int, int, unsigned long long, unsigned long long)>("numtrace_tensor_event");
  auto status = Sym<int (*)(int, const char*)>("numtrace_tensor_map_status");
  ASSERT_TRUE(wanted && event && status);
  EXPECT_EQ(wanted(), 0) << "no capture here: the hooks must not even build the bridge";
  EXPECT_EQ(event(0, 0, 0x7000'0000'0000ull, 4096), 0);
  EXPECT_EQ(event(99, 0, 0, 0), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(status(0, "no compiler"), 0);
  EXPECT_EQ(status(7, nullptr), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "an inactive library prints nothing";
}

TEST_F(ApiTest, OnlyTheCApiAndInjectionAreExported) {
  // Internal C++ symbols stay hidden (version script, hidden visibility).
  EXPECT_EQ(dlsym(handle, "_ZN8numtrace4shim7Runtime3GetEv"), nullptr);
  EXPECT_EQ(dlsym(handle, "_ZN8numtrace4shim11ParseConfigERKSt8functionIFPKcS3_EEPNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"), nullptr);
  EXPECT_NE(dlsym(handle, "numtrace_mark_step"), nullptr);
}

}  // namespace

namespace {

// Issue 24. In a child (gtest's threadsafe death-test style re-runs this
// test alone), because the library reads NUMTRACE_* once per process:
// NUMTRACE_LEVEL=ops starts numtrace without CUDA, and the op calls refuse
// hostile tensors with -1 instead of reading through them.
// The child's checks; returns a bit per failed check (0: all passed).
int OpLevelChild(void* h) {
  auto level = reinterpret_cast<int (*)()>(dlsym(h, "numtrace_op_level"));
  auto before = reinterpret_cast<long long (*)(const numtrace_tensor*, int, unsigned long long)>(dlsym(h, "numtrace_op_before"));
  auto after =
      reinterpret_cast<int (*)(long long, const char*, const numtrace_tensor*, int, unsigned long long)>(dlsym(h, "numtrace_op_after"));
  auto cuda = reinterpret_cast<int (*)()>(dlsym(h, "numtrace_cuda_started"));
  if (!level || !before || !after || !cuda) return 101;
  int bad = 0;
  if (level() != 1) bad |= 1;
  float v[6] = {1, 2, 3, 4, 5, 6};
  long long shape[2] = {2, 3}, huge_rank[1] = {-4};
  numtrace_tensor t{};
  t.storage = t.data = reinterpret_cast<uintptr_t>(v);
  t.shape = shape;
  t.ndim = 2;
  t.element_size = 4;
  t.dtype = "f32";
  t.device = "cpu";
  t.written = 1;
  if (before(nullptr, 1, 0) != -1 || before(&t, -1, 0) != -1) bad |= 2;
  numtrace_tensor wrong = t;
  wrong.element_size = 2;  // an f32 of 2 bytes would read past the tensor
  if (before(&wrong, 1, 0) != -1) bad |= 4;
  wrong = t;
  wrong.ndim = 65;
  if (before(&wrong, 1, 0) != -1) bad |= 8;
  wrong = t;
  wrong.shape = huge_rank;
  wrong.ndim = 1;
  if (before(&wrong, 1, 0) != -1) bad |= 16;
  wrong = t;
  wrong.device = nullptr;
  if (before(&wrong, 1, 0) != -1) bad |= 32;
  const long long token = before(&t, 1, 0);
  if (token < 0) bad |= 64;
  v[0] = 7;
  if (after(token, nullptr, &t, 1, 0) != -1) bad |= 128;
  if (after(token, "aten::fill_", &t, 1, 0) != 1) bad |= 256;
  if (cuda() != 0) bad |= 512;
  // The tensor map's calls while numtrace is active (audit W9: only their
  // inactive path was tested): a report out of range or without a size is
  // refused with -1, a good one taken.
  auto event = reinterpret_cast<int (*)(int, int, unsigned long long, unsigned long long)>(
      dlsym(h, "numtrace_tensor_event"));
  auto status = reinterpret_cast<int (*)(int, const char*)>(dlsym(h, "numtrace_tensor_map_status"));
  if (!event || !status) return 102;
  if (event(-1, 0, 0x7000'0000'0000ull, 4096) != -1 || event(99, 0, 0x7000'0000'0000ull, 4096) != -1) bad |= 1024;
  if (event(0, 0, 0x7000'0000'0000ull, 0) != -1 || event(2, 0, 0x7000'0000'0000ull, 0) != -1) bad |= 2048;
  if (event(2, 0, 0x7000'0000'0000ull, 2 << 20) != 1 || event(0, 0, 0x7000'0000'0200ull, 4096) != 1) bad |= 4096;
  if (status(-1, "x") != -1 || status(99, nullptr) != -1) bad |= 8192;
  return bad;
      }

TEST_F(ApiTest, OperatorLevelStartsWithoutCudaAndRefusesBadTensors) {
  // The child is a fresh run of this binary: it loads the library (which
  // reads its settings at load) with the environment set here.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  char dir[] = "/tmp/numtrace_api_ops_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("NUMTRACE_LEVEL", "ops", 1);
  setenv("NUMTRACE_STEPS", "0", 1);
  setenv("NUMTRACE_OUTPUT_DIR", dir, 1);
  // The failed checks' bits on stderr: an exit status keeps only 8 bits.
  auto child = [this] {
    const int bad = OpLevelChild(handle);
    if (bad != 0) std::fprintf(stderr, "failed checks: 0x%x\n", bad);
    std::exit(bad != 0 ? 1 : 0);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "");
  for (const char* v : {"NUMTRACE_LEVEL", "NUMTRACE_STEPS", "NUMTRACE_OUTPUT_DIR"}) unsetenv(v);
  std::filesystem::remove_all(dir);
}

}  // namespace
