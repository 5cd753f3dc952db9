#include "shim/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <thread>
#include <vector>

#include "common/settings/config.h"
#include "shim/device/host_device.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/range_oracle.h"
#include "shim/engine/tensor_map.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::ConfigFrom;
using testing::LaunchBuilder;
using testing::MemorySink;

uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// One host buffer registered as a device allocation.
struct Buf {
  explicit Buf(size_t n, float fill = 1.0f) : data(n, fill) {}
  std::vector<float> data;
  uint64_t addr() const { return Addr(data.data()); }
  uint64_t bytes() const { return data.size() * sizeof(float); }
};

class EngineTest : public ::testing::Test {
 protected:
  void Make(std::map<std::string, std::string> env) {
    config = ConfigFrom(std::move(env));
    engine = std::make_unique<Engine>(config, &device, &sink);
  }
  void Register(const Buf& b) { engine->OnAlloc({b.addr(), b.bytes(), AllocKind::kPlain, 0}); }
  // Launches `symbol` reading `in` and writing `out` (the "kernel" runs between ENTER and EXIT).
  void Launch(const std::string& symbol, Buf& in, Buf& out, uint64_t fn, float write = 2.0f) {
    LaunchBuilder b(symbol, fn);
    b.Pointer(in.data.data()).Pointer(out.data.data()).U32(static_cast<uint32_t>(in.data.size()));
    engine->OnLaunchEnter(b.event());
    for (float& v : out.data) v = write;
    engine->OnLaunch(b.event());
  }
  settings::Config config;
  HostDevice device;
  MemorySink sink;
  std::unique_ptr<Engine> engine;
};

TEST_F(EngineTest, AResumedJobsStepsAreCapturedByTheJobsNumber) {
  // A job resumed at step 10 says so at its first mark (numtrace_mark_step_to
  // (11), the optimizer's count): step 12 is the job's step 12, and step 10,
  // asked for but run before its number was known, is said not captured.
  Make({{"NUMTRACE_STEPS", "10,12"}});
  Buf in(256), out(256);
  Register(in);
  Register(out);
  Launch("_Z3addPfS_i", in, out, 11);  // the job's step 10, counted as 0
  engine->OnStepMarkTo(11);
  Launch("_Z3addPfS_i", in, out, 11, 2.0f);  // step 11
  engine->OnStepMarkTo(12);
  Launch("_Z3addPfS_i", in, out, 11, 3.0f);  // step 12: captured
  engine->OnStepMarkTo(13);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.kernels[0].step, 12);
  EXPECT_EQ(sink.kernels[0].launch, 2u);
  bool said = false;
  for (const NoteRecord& n : sink.notes) {
    said |= n.msg.find("step 10 was not captured in full") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST_F(EngineTest, CapturesOnlyTheSelectedStepWithRoles) {
  Make({{"NUMTRACE_STEPS", "1"}});
  Buf in(256), out(256);
  Register(in);
  Register(out);
  Launch("_Z3addPfS_i", in, out, 11);  // step 0: not captured
  engine->OnStepMark();
  Launch("_Z3addPfS_i", in, out, 11, 3.0f);  // step 1
  engine->OnStepMark();
  EXPECT_EQ(sink.flushes, 1);  // the captured step's end flushed the writer
  Launch("_Z3addPfS_i", in, out, 11, 4.0f);  // step 2: not captured
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  const KernelRecord& k = sink.kernels[0];
  EXPECT_EQ(k.launch, 1u);
  EXPECT_EQ(k.step, 1);
  EXPECT_EQ(k.name, "_Z3addPfS_i");
  EXPECT_EQ(k.demangled, "add(float*, float*, int)");
  ASSERT_EQ(k.buffers.size(), 2u);
  EXPECT_EQ(k.buffers[0].arg, 0u);
  EXPECT_EQ(k.buffers[0].addr, in.addr());
  EXPECT_EQ(k.buffers[0].role, Role::kIn);
  EXPECT_FALSE(k.buffers[0].pre.has_value());
  EXPECT_EQ(k.buffers[1].arg, 1u);
  EXPECT_EQ(k.buffers[1].role, Role::kOut);
  ASSERT_TRUE(k.buffers[1].pre.has_value());
  EXPECT_NE(k.buffers[1].pre->hash, k.buffers[1].stats.hash);
  EXPECT_TRUE(sink.finished);
  EXPECT_EQ(sink.launches, 3u);
  EXPECT_EQ(engine->counters().captured, 1u);
}

TEST_F(EngineTest, UndecodedLaunchIsCountedAndNeverMeasured) {
  // The CUPTI layer skips decoding while Quiet(); if a marker on another
  // thread opened the selected step meanwhile, the launch is noted, not
  // measured from parameters it does not have.
  Make({{"NUMTRACE_STEPS", "1"}});
  EXPECT_TRUE(engine->Quiet());
  engine->OnStepMark();
  EXPECT_FALSE(engine->Quiet());
  LaunchBuilder b("_Z6kernelPf", 9);
  LaunchEvent e = b.event();
  e.params = {};
  e.layout = {};
  e.decoded = false;
  engine->OnLaunchEnter(e);
  engine->OnLaunch(e);
  engine->Shutdown();
  EXPECT_TRUE(engine->Quiet());
  EXPECT_TRUE(sink.kernels.empty());
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("was not measured"), std::string::npos) << sink.notes[0].msg;
  EXPECT_EQ(engine->counters().launches, 1u);
}

TEST_F(EngineTest, StatsMeasureTheBufferAfterTheLaunch) {
  Make({{"NUMTRACE_STEPS", "0"}, {"NUMTRACE_OUTPUTS", "all"}});
  Buf in(100, 1.0f), out(100, 0.0f);
  Register(in);
  Register(out);
  LaunchBuilder b("_Z4fillPf", 5);
  b.Pointer(out.data.data());
  engine->OnLaunchEnter(b.event());
  std::fill(out.data.begin(), out.data.end(), 0.5f);
  engine->OnLaunch(b.event());
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u);
  const BufferRecord& r = sink.kernels[0].buffers[0];
  EXPECT_EQ(r.role, Role::kUnknown);  // outputs=all: nothing measured before
  EXPECT_FALSE(r.pre.has_value());
  EXPECT_EQ(r.dtype, DType::kF32);
  EXPECT_EQ(r.dtype_from, DTypeSource::kName);
  EXPECT_EQ(r.stats.n, 100u);
  EXPECT_DOUBLE_EQ(r.stats.sum, 50.0);
  EXPECT_DOUBLE_EQ(r.stats.max, 0.5);
}

TEST_F(EngineTest, ExitWithoutEnterGivesUnknownRoles) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf a(64);
  Register(a);
  LaunchBuilder b("_Z1kPf", 3);
  b.Pointer(a.data.data());
  engine->OnLaunch(b.event());  // a caller that never calls OnLaunchEnter
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.kernels[0].buffers[0].role, Role::kUnknown);
}

TEST_F(EngineTest, EnterWithoutExitIsAbandonedNotBlocking) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(64), out(64);
  Register(in);
  Register(out);
  LaunchBuilder failed("_Z6failedPf", 9);
  failed.Pointer(in.data.data());
  engine->OnLaunchEnter(failed.event());  // the launch failed: no EXIT
  Launch("_Z3addPfS_i", in, out, 11);
  engine->Pump();
  ASSERT_EQ(sink.kernels.size(), 1u);  // the later launch was not held back
  EXPECT_EQ(sink.kernels[0].name, "_Z3addPfS_i");
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("_Z6failedPf"), std::string::npos);
  engine->Shutdown();
  EXPECT_EQ(sink.dropped, 1u);
}

TEST_F(EngineTest, KernelFiltersAndLaunchWindow) {
  Make({{"NUMTRACE_STEPS", "0"},
        {"NUMTRACE_KERNEL", "regex:^_Z(3add|3mul)"},
        {"NUMTRACE_KERNEL_EXCLUDE", "mul"},
        {"NUMTRACE_LAUNCH_SKIP", "1"},
        {"NUMTRACE_LAUNCH_COUNT", "2"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  for (int i = 0; i < 5; ++i) {
    Launch("_Z3addPfS_i", in, out, 1);  // included
    Launch("_Z3mulPfS_i", in, out, 2);  // excluded
    Launch("_Z3subPfS_i", in, out, 3);  // not included
  }
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 2u);  // window: skip the first add, take two
  EXPECT_EQ(sink.kernels[0].launch, 3u);
  EXPECT_EQ(sink.kernels[1].launch, 6u);
  for (const auto& k : sink.kernels) EXPECT_EQ(k.name, "_Z3addPfS_i");
}

TEST_F(EngineTest, MinBytesLeavesSmallBuffersOut) {
  Make({{"NUMTRACE_STEPS", "0"}, {"NUMTRACE_MIN_BYTES", "1k"}});
  Buf small(16), big(1024);
  Register(small);
  Register(big);
  Launch("_Z3addPfS_i", small, big, 1);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u);
  EXPECT_EQ(sink.kernels[0].buffers[0].addr, big.addr());
}

TEST_F(EngineTest, FreedBuffersAreNotFound) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  engine->OnFree({in.addr(), 0, AllocKind::kPlain});
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u);
  EXPECT_EQ(sink.kernels[0].buffers[0].addr, out.addr());
}

TEST_F(EngineTest, AnnotationOverridesNameInference) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  Launch("_Z3addPfS_i", in, out, 1);  // cached before the annotation
  ASSERT_TRUE(engine->Annotate("add", "bf16,-"));
  Launch("_Z3addPfS_i", in, out, 1);
  std::string error;
  EXPECT_FALSE(engine->Annotate("add", "bf16,float32", &error));
  EXPECT_NE(error.find("float32"), std::string::npos);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 2u);
  EXPECT_EQ(sink.kernels[0].buffers[0].dtype, DType::kF32);
  EXPECT_EQ(sink.kernels[1].buffers[0].dtype, DType::kBF16);
  EXPECT_EQ(sink.kernels[1].buffers[0].dtype_from, DTypeSource::kSignature);
  EXPECT_EQ(sink.kernels[1].buffers[1].dtype, DType::kF32);  // "-": inference
  EXPECT_EQ(sink.kernels[1].buffers[1].dtype_from, DTypeSource::kName);
}

// Knows one host buffer no allocation callback reported; counts step ends.
class OneRangeOracle : public RangeOracle {
 public:
  explicit OneRangeOracle(const Buf& b) : b_(b) {}
  std::optional<Allocation> Confirm(uint64_t address) override {
    if (address >= b_.addr() && address < b_.addr() + b_.bytes()) {
      return Allocation{b_.addr(), b_.bytes(), AllocKind::kStreamOrdered};
    }
    return std::nullopt;
  }
  void NewStep() override { ++steps; }
  int steps = 0;

 private:
  const Buf& b_;
};

TEST_F(EngineTest, ABufferTheMapLacksIsFoundThroughTheRangeOracle) {
  Make({{"NUMTRACE_STEPS", "0"}, {"NUMTRACE_OUTPUTS", "all"}});
  Buf pooled(64, 3.0f);  // allocated with no callback: not Register()ed
  OneRangeOracle oracle(pooled);
  engine->SetRangeOracle(&oracle);
  LaunchBuilder b("_Z4fillPf", 5);
  b.Pointer(pooled.data.data());
  engine->OnLaunchEnter(b.event());
  engine->OnLaunch(b.event());
  engine->OnStepMark();
  EXPECT_EQ(oracle.steps, 1) << "the driver's answers are dropped at the captured step's end";
  EXPECT_TRUE(engine->TakeStepEnded()) << "the CUDA layer may flush its step records now";
  EXPECT_FALSE(engine->TakeStepEnded()) << "once per step";
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u);
  EXPECT_EQ(sink.kernels[0].buffers[0].bytes, pooled.bytes());
  EXPECT_DOUBLE_EQ(sink.kernels[0].buffers[0].stats.sum, 192.0);
}

TEST_F(EngineTest, UnmeasuredKernelsBecomeNotesAndFooterCounts) {
  Make({{"NUMTRACE_STEPS", "0"}});
  CaptureCounters::Get().Reset();
  CaptureCounters::Get().Add(Counter::kRuntimeWithoutDriver, 3);
  engine->OnUnmeasured("ncclKernel_AllReduce", 2, false);
  engine->OnUnmeasured("graph_node", 5, true);
  engine->OnUnmeasured("nothing", 0, false);  // nothing ran: no note
  engine->Shutdown();
  ASSERT_EQ(sink.notes.size(), 2u);
  EXPECT_EQ(sink.notes[0].kind, "unmeasured");
  EXPECT_EQ(sink.notes[0].name, "ncclKernel_AllReduce");
  EXPECT_EQ(sink.notes[0].count, std::optional<uint64_t>(2));
  EXPECT_NE(sink.notes[1].msg.find("graph"), std::string::npos) << sink.notes[1].msg;
  EXPECT_EQ(sink.unmeasured, 7u);
  ASSERT_EQ(sink.counters.size(), static_cast<size_t>(Counter::kCount));
  bool found = false;
  for (auto& [name, value] : sink.counters) {
    if (name == "runtime_without_driver") found = value == 3;
  }
  EXPECT_TRUE(found) << "the capture layer's counters reach the footer";
  engine->OnUnmeasured("late", 1, false);  // after shutdown: ignored
  EXPECT_EQ(sink.notes.size(), 2u);
}

// Finding 13: the CUDA layer's warnings (another tool took CUPTI's activity
// buffers) reach the trace as notes, never after the footer.
TEST_F(EngineTest, CudaLayerWarningsBecomeNotes) {
  Make({{"NUMTRACE_STEPS", "0"}});
  engine->OnWarning("CUPTI kernel activity records stopped reaching numtrace");
  engine->Shutdown();
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_EQ(sink.notes[0].msg, "CUPTI kernel activity records stopped reaching numtrace");
  engine->OnWarning("late");  // after shutdown: ignored
  EXPECT_EQ(sink.notes.size(), 1u);
}

TEST_F(EngineTest, GraphLaunchAndStreamCaptureLeaveNotesInOrder) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  Launch("_Z3addPfS_i", in, out, 1);
  engine->OnGraphLaunch({0xabc, 7});
  LaunchBuilder cap("_Z3addPfS_i", 1);
  cap.Pointer(in.data.data()).Capturing(true);
  engine->OnLaunchEnter(cap.event());
  engine->OnLaunch(cap.event());
  engine->OnLaunchEnter(cap.event());
  engine->OnLaunch(cap.event());
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Shutdown();
  EXPECT_EQ(sink.order, "knnk");  // one capture note per step, not per launch
  EXPECT_NE(sink.notes[0].msg.find("0xabc"), std::string::npos);
  EXPECT_NE(sink.notes[1].msg.find("capturing"), std::string::npos);
}

TEST_F(EngineTest, DeviceRefusalDropsAndCounts) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  device.FailNextEnqueues(1);
  Launch("_Z3addPfS_i", in, out, 1);  // "before" refused
  EXPECT_EQ(device.enqueued(), 0u) << "dropped whole: its \"after\" is not even asked for";
  EXPECT_EQ(device.rejected(), 1u);
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.kernels[0].launch, 1u);
  EXPECT_EQ(sink.dropped, 1u);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("NUMTRACE_DEVICE_MEMORY"), std::string::npos);
}

// One seq counter (the engine's): a record the sink refuses gives its seq
// to the next one, so the trace stays dense.
class RefusingSink : public testing::MemorySink {
 public:
  bool Push(KernelRecord r) override {
    if (++pushes % 3 == 2) return false;  // the 2nd, 5th, ... kernel record
    return MemorySink::Push(std::move(r));
  }
  bool Push(NoteRecord n) override { return MemorySink::Push(std::move(n)); }
  int pushes = 0;
};

TEST(EngineSeq, RefusedRecordsLeaveNoHole) {
  settings::Config config = ConfigFrom({{"NUMTRACE_STEPS", "0"}});
  HostDevice device;
  RefusingSink sink;
  Engine engine(config, &device, &sink);
  Buf in(16), out(16);
  engine.OnAlloc({in.addr(), in.bytes(), AllocKind::kPlain, 0});
  engine.OnAlloc({out.addr(), out.bytes(), AllocKind::kPlain, 0});
  for (int i = 0; i < 9; ++i) {
    LaunchBuilder b("_Z3addPfS_i", 1);
    b.Pointer(in.data.data()).Pointer(out.data.data()).U32(16);
    engine.OnLaunchEnter(b.event());
    engine.OnLaunch(b.event());
    engine.Pump();
  }
  engine.Shutdown();
  ASSERT_EQ(sink.kernels.size(), 6u);
  for (size_t i = 0; i < sink.kernels.size(); ++i) EXPECT_EQ(sink.kernels[i].seq, i);
}

// Review finding 12: a measurement the GPU failed never completed, and
// records are written in launch order, so every later record stayed in
// memory until exit. Fails before the fix: nothing is written before
// Shutdown.
TEST_F(EngineTest, AFailedMeasurementDropsItsLaunchAndLaterRecordsFlow) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  device.FailNextResults(1);  // the first launch's "before"
  Launch("_Z3addPfS_i", in, out, 1);
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Pump();
  ASSERT_EQ(sink.kernels.size(), 1u) << "the second launch's record is written without waiting for exit";
  EXPECT_EQ(sink.kernels[0].launch, 1u);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("reported an error"), std::string::npos) << sink.notes[0].msg;
  engine->Shutdown();
  EXPECT_EQ(sink.dropped, 1u);
}

// Review finding 10: the step's cached driver ranges are asked again after
// a pool trim (which may have unmapped any freed pool range). Fails before
// the fix: the engine ignored trims and the stale answer stayed.
TEST_F(EngineTest, APoolTrimClearsTheCachedDriverRanges) {
  struct Counting : RangeOracle {
    std::optional<Allocation> Confirm(uint64_t address) override {
      ++asked;
      return Allocation{address & ~uint64_t{0xfff}, 0x1000, AllocKind::kStreamOrdered};
    }
    int asked = 0;
  } driver;
  StepRangeCache cache(&driver);
  Make({{"NUMTRACE_STEPS", "0"}});
  engine->SetRangeOracle(&cache);
  ASSERT_TRUE(cache.Confirm(0x7000010).has_value());
  ASSERT_TRUE(cache.Confirm(0x7000020).has_value());
  EXPECT_EQ(driver.asked, 1) << "cached within the step";
  engine->OnPoolTrim();
  ASSERT_TRUE(cache.Confirm(0x7000010).has_value());
  EXPECT_EQ(driver.asked, 2) << "asked again after the trim";
  engine->Shutdown();
}

TEST_F(EngineTest, RecordsWaitForSlowResultsAndKeepLaunchOrder) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  device.SetHoldResults(true);
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Pump();
  EXPECT_TRUE(sink.kernels.empty());  // results not back yet: nothing emitted
  device.SetHoldResults(false);
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Pump();
  ASSERT_EQ(sink.kernels.size(), 2u);
  EXPECT_LT(*sink.kernels[0].launch, *sink.kernels[1].launch);
  engine->Shutdown();
}

TEST_F(EngineTest, ManyThreadsRecordsInLaunchOrderDenseSeq) {
  Make({{"NUMTRACE_STEPS", "all"}});
  constexpr int kThreads = 4, kPerThread = 300;
  std::vector<std::unique_ptr<Buf>> bufs;
  for (int t = 0; t < kThreads * 2; ++t) {
    bufs.push_back(std::make_unique<Buf>(32));
    Register(*bufs.back());
  }
  std::atomic<bool> stop{false};
  std::thread pumper([&] {
    while (!stop.load()) engine->Pump();
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Launch("_Z3addPfS_i", *bufs[2 * t], *bufs[2 * t + 1], 1, static_cast<float>(i));
      }
    });
  }
  for (auto& th : threads) th.join();
  stop = true;
  pumper.join();
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), static_cast<size_t>(kThreads * kPerThread));
  for (size_t i = 0; i < sink.kernels.size(); ++i) {
    EXPECT_EQ(sink.kernels[i].seq, i);
    if (i) {
      ASSERT_LT(*sink.kernels[i - 1].launch, *sink.kernels[i].launch);
    }
  }
  EXPECT_EQ(sink.launches, static_cast<uint64_t>(kThreads * kPerThread));
}

TEST_F(EngineTest, ShutdownIsIdempotentAndStopsCapture) {
  Make({{"NUMTRACE_STEPS", "0"}});
  Buf in(16), out(16);
  Register(in);
  Register(out);
  engine->Shutdown();
  Launch("_Z3addPfS_i", in, out, 1);
  engine->Shutdown();
  EXPECT_TRUE(sink.kernels.empty());
  EXPECT_EQ(engine->counters().launches, 1u);
}

}  // namespace
}  // namespace numtrace::shim

namespace numtrace::shim {
namespace {

// Issue 18, item 7: under PyTorch's caching allocator the driver sees one
// allocation per segment; the blocks the hooks report make each pointer the
// tensor it points into, with exactly the requested bytes.
class TensorMapEngineTest : public EngineTest {
 protected:
  void SetUp() override {
    Make({{"NUMTRACE_STEPS", "0"}});
    // The segment: tensor A (100 floats), allocator padding, tensor B at
    // float 512 (200 floats); NaN everywhere outside them.
    std::fill(segment.data.begin(), segment.data.end(), std::nanf(""));
    std::fill_n(segment.data.begin(), 100, 1.0f);
    std::fill_n(segment.data.begin() + 512, 200, 2.0f);
    Register(segment);
  }
  uint64_t At(size_t floats) const { return segment.addr() + floats * sizeof(float); }
  void Report(TensorAction a, uint64_t addr, uint64_t bytes) { engine->OnTensorEvent({a, 0, addr, bytes}); }
  void LaunchOn(std::initializer_list<uint64_t> pointers) {
    LaunchBuilder b("_Z3addPfS_i", 1);
    for (uint64_t p : pointers) b.U64(p);
    engine->OnLaunchEnter(b.event());
    engine->OnLaunch(b.event());
  }
  Buf segment{1024};
};

TEST_F(TensorMapEngineTest, APointerIsTheReportedTensorNotTheSegment) {
  LaunchOn({At(0), At(512)});  // no tensor map: the whole segment, once
  Report(TensorAction::kSegmentAlloc, segment.addr(), segment.bytes());
  Report(TensorAction::kAlloc, At(0), 100 * sizeof(float));
  Report(TensorAction::kAlloc, At(512), 200 * sizeof(float));
  LaunchOn({At(0), At(512) + 8});
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 2u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u) << "both words land in the one segment";
  EXPECT_EQ(sink.kernels[0].buffers[0].bytes, segment.bytes());
  const auto& b = sink.kernels[1].buffers;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].addr, At(0));
  EXPECT_EQ(b[0].bytes, 400u);
  EXPECT_EQ(b[0].stats.nan, 0u) << "not one byte of padding measured";
  EXPECT_EQ(b[0].stats.sum, 100.0);
  EXPECT_EQ(b[1].addr, At(512));
  EXPECT_EQ(b[1].offset, 8u);
  EXPECT_EQ(b[1].bytes, 800u);
  EXPECT_EQ(b[1].stats.sum, 400.0);
}

TEST_F(TensorMapEngineTest, FreeSpaceAndFreedTensorsAreRefusedAndCounted) {
  CaptureCounters::Get().Reset();
  Report(TensorAction::kSegmentAlloc, segment.addr(), segment.bytes());
  Report(TensorAction::kAlloc, At(0), 400);
  Report(TensorAction::kAlloc, At(512), 800);
  Report(TensorAction::kFree, At(512), 0);
  LaunchOn({At(0), At(300), At(512)});  // live, free space, freed
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u);
  EXPECT_EQ(sink.kernels[0].buffers[0].addr, At(0));
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kPointersOutsideTensors), 2u);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kTensorEvents), 4u);
}

TEST_F(TensorMapEngineTest, AnUnmappedSegmentTakesItsBlocksAlong) {
  Report(TensorAction::kSegmentAlloc, segment.addr(), segment.bytes());
  Report(TensorAction::kAlloc, At(512), 800);
  // Expandable segments unmap a tail: the block there is gone, the rest stays.
  Report(TensorAction::kSegmentFree, At(512), 512 * sizeof(float));
  LaunchOn({At(512)});
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  ASSERT_EQ(sink.kernels[0].buffers.size(), 1u) << "outside the map now: the driver allocation again";
  EXPECT_EQ(sink.kernels[0].buffers[0].addr, segment.addr());
}

// A segment freed without a size (the C API allows bytes == 0) takes all of
// itself and its blocks along; before, the blocks outlived it and a stale
// pointer into the freed memory resolved to a tensor.
TEST(TensorMapTest, ASegmentFreedWithoutASizeTakesItsBlocksAlong) {
  TensorMap map;
  constexpr uint64_t kSegment = 0x7000'0000'0000, kBlock = kSegment + 0x200;
  ASSERT_TRUE(map.Apply({TensorAction::kSegmentAlloc, 0, kSegment, 2 << 20}));
  ASSERT_TRUE(map.Apply({TensorAction::kAlloc, 0, kBlock, 4096}));
  EXPECT_FALSE(map.Apply({TensorAction::kSegmentFree, 0, kBlock, 0})) << "not a segment's start: refused";
  EXPECT_EQ(map.blocks(), 1u);
  ASSERT_TRUE(map.Apply({TensorAction::kSegmentFree, 0, kSegment, 0}));
  EXPECT_EQ(map.segments(), 0u);
  EXPECT_EQ(map.blocks(), 0u);
  EXPECT_FALSE(map.Resolve(kBlock + 16).block.has_value());
  EXPECT_TRUE(map.empty());
}

TEST_F(TensorMapEngineTest, TheFeedsOutcomeIsOneNoteAndOneStderrLine) {
  ::testing::internal::CaptureStderr();
  engine->OnTensorMapStatus(TensorMapState::kNotAttached, "no C++ compiler (set CXX)");
  engine->OnTensorMapStatus(TensorMapState::kAttached, "a second say is ignored");
  const std::string err = ::testing::internal::GetCapturedStderr();
  engine->Shutdown();
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("NOT attached"), std::string::npos) << sink.notes[0].msg;
  EXPECT_NE(sink.notes[0].msg.find("set CXX"), std::string::npos);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("--allocator async"), std::string::npos) << err;
}

// PyTorch in the process, and the hooks never said a word (a hand-made
// LD_PRELOAD without PYTHONPATH): said at the first captured step's end.
TEST_F(TensorMapEngineTest, AnExpectedFeedThatNeverCameIsSaidAtTheStepEnd) {
  engine->ExpectTensorMap();
  LaunchOn({At(0)});
  ::testing::internal::CaptureStderr();
  engine->OnStepMark();  // step 0, the captured one, ends
  const std::string err = ::testing::internal::GetCapturedStderr();
  engine->Shutdown();
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("nothing reported by the end of step 0"), std::string::npos) << sink.notes[0].msg;
  EXPECT_NE(err.find("PYTHONPATH"), std::string::npos) << err;
}

TEST_F(TensorMapEngineTest, AFeedThatAttachedInTimeIsNotCalledMissing) {
  engine->ExpectTensorMap();
  engine->OnTensorMapStatus(TensorMapState::kAttached, "torch 2.11.0");
  LaunchOn({At(0)});
  engine->OnStepMark();
  engine->Shutdown();
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].msg.find("attached; torch 2.11.0"), std::string::npos) << sink.notes[0].msg;
}

}  // namespace
}  // namespace numtrace::shim
