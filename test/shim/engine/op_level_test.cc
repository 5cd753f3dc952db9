// The engine's operator-level path (NUMTRACE_LEVEL=ops): records of op
// calls fed as the C API feeds them (numtrace_op_before/after), CPU tensors
// by the host reduction, "CUDA" tensors through an op device (here a
// HostDevice, whose addresses are host pointers, standing in for CudaDevice).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/format/digest.h"
#include "common/settings/config.h"
#include "common/settings/modes.h"
#include "shim/device/host_device.h"
#include "shim/engine/engine.h"
#include "shim/reduce/host_reduce.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::ConfigFrom;
using testing::LaunchBuilder;
using testing::WatchSink;

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
  settings::Config config;
  HostDevice device;
  WatchSink sink;  // keeps watch mode's records too (OpWatchTest)
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

// An op record the op device refused is dropped with a note naming the
// operator. Crashed before the record builder: the drop note read the
// kernel's symbol, which an op record has not.
TEST_F(OpLevelTest, ARefusedOpMeasurementIsDroppedWithANoteNamingTheOperator) {
  Make({{"NUMTRACE_STEPS", "0"}});
  std::vector<float> x(8, 1.0f), y(8, 0.0f);
  T in(x, {8}, 0, false, {}, OpDevice::kCuda), out(y, {8}, 1, true, {}, OpDevice::kCuda);
  std::vector<OpTensor> ts = {in.t, out.t};
  HostDevice cuda;  // stands in for CudaDevice
  engine->SetOpDevice(&cuda);
  const int64_t refused = engine->OnOpBefore(ts, 7);
  cuda.FailNextEnqueues(1);  // the "after" of aten::mul_out
  engine->OnOpAfter(refused, "aten::mul_out", ts, 7);
  const int64_t token = engine->OnOpBefore(ts, 7);
  engine->OnOpAfter(token, "aten::neg_out", ts, 7);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.kernels[0].name, "aten::neg_out");
  EXPECT_EQ(sink.kernels[0].seq, 0u);
  EXPECT_EQ(sink.dropped, 1u);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_EQ(sink.notes[0].msg.rfind("operator aten::mul_out not recorded: ", 0), 0u) << sink.notes[0].msg;
}

// Watch mode at operator level (`numtrace run --ops --watch`): every call
// of every step digested as its op record's buffers, one digest per step.
class OpWatchTest : public OpLevelTest {
 protected:
  // One step: y = x * 2 (aten::mul), then x += y (aten::add_), then a mark.
  void Step(std::vector<float>& x, std::vector<float>& y, OpDevice on = OpDevice::kCpu) {
    T in(x, {static_cast<int64_t>(x.size())}, 0, false, {}, on);
    T out(y, {static_cast<int64_t>(y.size())}, 2, true, {}, on);
    std::vector<OpTensor> mul = {in.t, out.t};
    int64_t token = engine->OnOpBefore({}, 0);
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 2;
    engine->OnOpAfter(token, "aten::mul", mul, 0);
    T self(x, {static_cast<int64_t>(x.size())}, 0, true, {}, on);
    T other(y, {static_cast<int64_t>(y.size())}, 1, false, {}, on);
    std::vector<OpTensor> add = {self.t, other.t};
    std::vector<OpTensor> written = {self.t};
    token = engine->OnOpBefore(written, 0);
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
    engine->OnOpAfter(token, "aten::add_", add, 0);
    engine->OnStepMark();
    engine->Pump();
  }
};

TEST_F(OpWatchTest, EveryStepIsDigestedPerOpAndDiffersWhereOneTensorDiffers) {
  Make({{"NUMTRACE_WATCH", "full"}});
  std::vector<float> x(256, 1.0f), y(256, 0.0f);
  for (int step = 0; step < 3; ++step) {
    std::vector<float> xs = x;  // every step starts from the same data...
    if (step == 2) xs[7] = 5.0f;  // ...but one element in step 2
    Step(xs, y);
  }
  engine->Shutdown();
  EXPECT_TRUE(sink.kernels.empty());  // no step selected: digests only
  ASSERT_EQ(sink.digests.size(), 3u);
  ASSERT_EQ(sink.names.size(), 2u);
  EXPECT_EQ(sink.names[0].name, "aten::mul");
  EXPECT_EQ(sink.names[1].name, "aten::add_");
  for (int step = 0; step < 3; ++step) {
    const DigestRecord& d = sink.digests[step];
    EXPECT_EQ(d.step, step);
    EXPECT_EQ(d.kernels, 2u);
    EXPECT_EQ(d.lost, 0u);
    EXPECT_EQ(d.names, (std::vector<uint64_t>{0, 1}));
    EXPECT_NE(d.kernel_hashes[0], 0u);
  }
  EXPECT_EQ(sink.digests[0].hash, sink.digests[1].hash);
  EXPECT_EQ(sink.digests[0].kernel_hashes, sink.digests[1].kernel_hashes);
  EXPECT_NE(sink.digests[2].hash, sink.digests[1].hash);
  EXPECT_NE(sink.digests[2].kernel_hashes[0], sink.digests[1].kernel_hashes[0]);
  // Each digest is KernelDigest of the op record's buffer hashes, in order.
  std::vector<float> x0(256, 1.0f), y0(256, 2.0f);
  const uint64_t mul[] = {ReduceHost(x0.data(), 1024, DType::kF32).hash, ReduceHost(y0.data(), 1024, DType::kF32).hash};
  EXPECT_EQ(sink.digests[0].kernel_hashes[0], KernelDigest(mul));
}

TEST_F(OpWatchTest, ASelectedStepIsAlsoCapturedInFullAndAgreesWithItsDigests) {
  Make({{"NUMTRACE_WATCH", "full"}, {"NUMTRACE_STEPS", "1"}});
  std::vector<float> x(64, 1.5f), y(64, 0.0f);
  for (int step = 0; step < 3; ++step) Step(x, y);
  engine->Shutdown();
  ASSERT_EQ(sink.digests.size(), 3u);
  ASSERT_EQ(sink.kernels.size(), 2u);  // step 1's two op records
  for (size_t i = 0; i < 2; ++i) {
    const KernelRecord& r = sink.kernels[i];
    EXPECT_EQ(r.step, 1);
    std::vector<uint64_t> hashes;
    for (const BufferRecord& b : r.buffers) hashes.push_back(b.stats.hash);
    EXPECT_EQ(sink.digests[1].kernel_hashes[i], KernelDigest(hashes)) << r.name;
  }
}

TEST_F(OpWatchTest, SampledDigestsReadTheDocumentedWindows) {
  Make({{"NUMTRACE_WATCH", "sampled"}});
  // 256 KiB: sampled over windows, not whole (common/format/digest.h).
  std::vector<float> x(64 * 1024, 1.0f), y(64 * 1024, 0.0f);
  SampleWindow w[kSampleWindows];
  ASSERT_EQ(SampleWindows(x.size() * 4, w), kSampleWindows);
  const size_t outside = (w[0].offset + w[0].bytes) / 4 + 1;  // between the head and the next window
  ASSERT_LT(outside * 4, w[1].offset);
  for (int step = 0; step < 3; ++step) {
    std::vector<float> xs = x;
    if (step == 1) xs[outside] = 9.0f;  // not sampled: same digest
    if (step == 2) xs[0] = 9.0f;        // in the head window: differs
    Step(xs, y);
  }
  engine->Shutdown();
  ASSERT_EQ(sink.digests.size(), 3u);
  EXPECT_EQ(sink.digests[0].hash, sink.digests[1].hash);
  EXPECT_NE(sink.digests[0].hash, sink.digests[2].hash);
}

TEST_F(OpWatchTest, CudaTensorsAreDigestedOnTheOpDeviceOrCountedLost) {
  Make({{"NUMTRACE_WATCH", "full"}});
  std::vector<float> x(64, 1.0f), y(64, 0.0f);
  std::vector<float> xs = x;
  Step(xs, y, OpDevice::kCuda);  // step 0: no CUDA device yet: lost, said once
  HostDevice cuda;               // stands in for CudaDevice
  engine->SetOpDevice(&cuda);
  xs = x;
  Step(xs, y, OpDevice::kCuda);  // step 1: on the op device
  xs = x;
  Step(xs, y);                   // step 2: the same bytes on the CPU
  engine->Shutdown();
  ASSERT_EQ(sink.digests.size(), 3u);
  EXPECT_EQ(sink.digests[0].lost, 2u);
  EXPECT_EQ(sink.digests[0].kernel_hashes, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(sink.digests[1].lost, 0u);
  EXPECT_GE(cuda.enqueued(), 2u);
  EXPECT_EQ(sink.digests[1].kernel_hashes, sink.digests[2].kernel_hashes);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("counts their calls as lost"), std::string::npos) << sink.notes[0].msg;
}

TEST(OpLevelConfig, OpsIsTakenWithWatch) {
  const settings::Config c = ConfigFrom({{"NUMTRACE_LEVEL", "ops"}, {"NUMTRACE_WATCH", "full"}});
  EXPECT_EQ(c.level, CaptureLevel::kOps);
  EXPECT_EQ(c.watch, settings::WatchMode::kFull);
  EXPECT_THROW(ConfigFrom({{"NUMTRACE_LEVEL", "op"}}), std::runtime_error);
  EXPECT_EQ(ConfigFrom({{"NUMTRACE_LEVEL", " ops "}}).level, CaptureLevel::kOps);
  EXPECT_EQ(ConfigFrom({}).level, CaptureLevel::kKernels);
}

}  // namespace
}  // namespace numtrace::shim
