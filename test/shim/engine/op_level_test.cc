// The engine's operator-level path (NUMTRACE_LEVEL=ops): records of op
// calls fed as the C API feeds them (numtrace_op_before/after), CPU tensors
// by the host reduction, "CUDA" tensors through an op device (here a
// HostDevice, whose addresses are host pointers, standing in for CudaDevice).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "shim/device/host_device.h"
#include "shim/engine/engine.h"
#include "shim/reduce/host_reduce.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::ConfigFrom;
using testing::LaunchBuilder;
using testing::MemorySink;

uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// One tensor over `data` with `shape` (contiguous unless `strides` given).
struct T {
  T(const std::vector<float>& data, std::vector<int64_t> shape, uint32_t arg, bool written,
    std::vector<int64_t> strides = {}, OpDevice device = OpDevice::kCpu)
      : shape_(std::move(shape)), strides_(std::move(strides)) {
    t.storage = Addr(data.data());
    t.data = t.storage;
    t.shape = shape_;
    t.strides = strides_;
    t.dtype = DType::kF32;
    t.element_size = 4;
    t.arg = arg;
    t.written = written;
    t.device = device;
  }
  std::vector<int64_t> shape_, strides_;
  OpTensor t;
};

class OpLevelTest : public ::testing::Test {
 protected:
  void Make(std::map<std::string, std::string> env) {
    env.emplace("NUMTRACE_LEVEL", "ops");
    config = ConfigFrom(std::move(env));
    engine = std::make_unique<Engine>(config, &device, &sink);
  }
  Config config;
  HostDevice device;
  MemorySink sink;
  std::unique_ptr<Engine> engine;
};

TEST_F(OpLevelTest, InPlaceOpHasPreAndResultsAreOutputs) {
  Make({{"NUMTRACE_STEPS", "1"}});
  std::vector<float> self(6, 1.0f), other(6, 2.0f);
  T a(self, {2, 3}, 0, true), b(other, {2, 3}, 1, false);
  std::vector<OpTensor> ts = {a.t, b.t};
  EXPECT_EQ(engine->OnOpBefore(ts, 0), -1);  // step 0: not captured
  engine->OnStepMark();
  const int64_t token = engine->OnOpBefore(ts, 0);
  ASSERT_GE(token, 0);
  for (size_t i = 0; i < self.size(); ++i) self[i] += other[i];  // aten::add_
  engine->OnOpAfter(token, "aten::add_", ts, 0);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  const KernelRecord& r = sink.kernels[0];
  EXPECT_TRUE(r.op_level);
  EXPECT_EQ(r.name, "aten::add_");
  EXPECT_EQ(r.op, "aten::add_");
  EXPECT_FALSE(r.grid.has_value());
  EXPECT_EQ(r.step, 1);
  ASSERT_EQ(r.buffers.size(), 2u);
  EXPECT_EQ(r.buffers[0].role, Role::kOut);
  ASSERT_TRUE(r.buffers[0].pre.has_value());
  EXPECT_EQ(r.buffers[0].pre->sum, 6.0);
  EXPECT_EQ(r.buffers[0].stats.sum, 18.0);
  EXPECT_EQ(r.buffers[1].role, Role::kIn);
  EXPECT_FALSE(r.buffers[1].pre.has_value());
  EXPECT_EQ(*r.buffers[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.buffers[1].device, "cpu");
  EXPECT_EQ(r.buffers[1].bytes, 24u);
  EXPECT_EQ(sink.launches, 2u);  // op calls, captured or not
}

// A written argument stays an output when its bytes did not change: what it
// held before may be uninitialised memory (zero_ of a fresh empty), which
// must not decide the record's roles from run to run.
TEST_F(OpLevelTest, AWrittenArgumentLeftUnchangedIsStillAnOutput) {
  Make({{"NUMTRACE_STEPS", "0"}});
  std::vector<float> out(4, 0.0f);
  T o(out, {4}, 0, true);
  std::vector<OpTensor> ts = {o.t};
  const int64_t token = engine->OnOpBefore(ts, 0);
  engine->OnOpAfter(token, "aten::zero_", ts, 0);  // zeros over zeros
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.kernels[0].buffers[0].role, Role::kOut);
  ASSERT_TRUE(sink.kernels[0].buffers[0].pre.has_value());
  EXPECT_EQ(sink.kernels[0].buffers[0].pre->hash, sink.kernels[0].buffers[0].stats.hash);
}

TEST_F(OpLevelTest, AStridedViewIsMeasuredInElementOrder) {
  Make({{"NUMTRACE_STEPS", "0"}});
  // A 3x2 transpose of the 2x3 row-major [0 1 2; 3 4 5]: values 0 3 1 4 2 5.
  std::vector<float> base = {0, 1, 2, 3, 4, 5};
  std::vector<float> transposed = {0, 3, 1, 4, 2, 5};
  T view(base, {3, 2}, 0, false, {1, 3});
  std::vector<OpTensor> ts = {view.t};
  const int64_t token = engine->OnOpBefore(ts, 0);
  engine->OnOpAfter(token, "aten::clone", ts, 0);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  const BufferStats want = ReduceHost(transposed.data(), 24, DType::kF32);
  EXPECT_EQ(sink.kernels[0].buffers[0].stats.hash, want.hash);
  EXPECT_NE(sink.kernels[0].buffers[0].stats.hash, ReduceHost(base.data(), 24, DType::kF32).hash);
  EXPECT_EQ(sink.kernels[0].buffers[0].addr, Addr(base.data()));
}

TEST_F(OpLevelTest, KernelLaunchesAreNotCapturedAtOperatorLevel) {
  Make({{"NUMTRACE_STEPS", "0"}});
  std::vector<float> buf(64, 1.0f);
  engine->OnAlloc({Addr(buf.data()), 256, AllocKind::kPlain, 0});
  EXPECT_TRUE(engine->Quiet());
  LaunchBuilder b("_Z3addPf", 3);
  b.Pointer(buf.data());
  engine->OnLaunchEnter(b.event());
  engine->OnLaunch(b.event());
  engine->Shutdown();
  EXPECT_TRUE(sink.kernels.empty());
}

TEST_F(OpLevelTest, CudaTensorsGoThroughTheOpDeviceAndOtherDevicesAreSaidOnce) {
  Make({{"NUMTRACE_STEPS", "0"}});
  std::vector<float> x(8, 1.0f), y(8, 0.0f);
  T in(x, {8}, 0, false, {}, OpDevice::kCuda), out(y, {8}, 1, true, {}, OpDevice::kCuda);
  std::vector<OpTensor> ts = {in.t, out.t};
  // No CUDA device yet: left out, one note.
  int64_t token = engine->OnOpBefore(ts, 0);
  engine->OnOpAfter(token, "aten::copy_", ts, 0);
  HostDevice cuda;  // stands in for CudaDevice
  engine->SetOpDevice(&cuda);
  token = engine->OnOpBefore(ts, 7);
  for (size_t i = 0; i < y.size(); ++i) y[i] = x[i] * 3;
  engine->OnOpAfter(token, "aten::mul_out", ts, 7);
  T mps(x, {8}, 0, false, {}, OpDevice::kOther);
  mps.t.device_name = "mps";
  std::vector<OpTensor> other = {mps.t};
  token = engine->OnOpBefore(other, 0);
  engine->OnOpAfter(token, "aten::neg", other, 0);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 3u);
  EXPECT_TRUE(sink.kernels[0].buffers.empty());
  ASSERT_EQ(sink.kernels[1].buffers.size(), 2u);
  EXPECT_EQ(sink.kernels[1].buffers[0].device, "cuda:0");
  EXPECT_EQ(sink.kernels[1].buffers[0].role, Role::kIn);
  EXPECT_EQ(sink.kernels[1].buffers[1].role, Role::kOut);
  ASSERT_TRUE(sink.kernels[1].buffers[1].pre.has_value());
  EXPECT_EQ(sink.kernels[1].buffers[1].pre->sum, 0.0);
  EXPECT_EQ(sink.kernels[1].buffers[1].stats.sum, 24.0);
  EXPECT_EQ(cuda.enqueued(), 2u);  // before and after, on the op device
  EXPECT_TRUE(sink.kernels[2].buffers.empty());
  ASSERT_EQ(sink.notes.size(), 1u);  // said once, for the first device it could not measure
  EXPECT_NE(sink.notes[0].msg.find("not measured"), std::string::npos) << sink.notes[0].msg;
}

TEST(OpLevelConfig, OpsIsRefusedWithWatch) {
  EXPECT_THROW(ConfigFrom({{"NUMTRACE_LEVEL", "ops"}, {"NUMTRACE_WATCH", "full"}}), std::runtime_error);
  EXPECT_THROW(ConfigFrom({{"NUMTRACE_LEVEL", "op"}}), std::runtime_error);
  EXPECT_EQ(ConfigFrom({{"NUMTRACE_LEVEL", " ops "}}).level, CaptureLevel::kOps);
  EXPECT_EQ(ConfigFrom({}).level, CaptureLevel::kKernels);
}

}  // namespace
}  // namespace numtrace::shim
