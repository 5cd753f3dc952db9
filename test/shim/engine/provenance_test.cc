// Per-thread provenance (shim/engine/provenance.h) and the engine's stamping
// of captured launches with it, including the bad input a hook can produce:
// pops without pushes, runaway names, non-UTF-8 bytes, other threads.
#include "shim/engine/provenance.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/format/jsonl_writer.h"
#include "common/settings/config.h"
#include "shim/device/host_device.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/engine.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

class ProvenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    provenance::ResetThread();
    CaptureCounters::Get().Reset();
  }
  void TearDown() override { provenance::ResetThread(); }
};

TEST_F(ProvenanceTest, InnermostScopeAndOpWin) {
  EXPECT_FALSE(provenance::Any());
  provenance::PushScope("layers.0");
  provenance::PushScope("layers.0.attention.wq");
  provenance::PushOp("aten::mm");
  provenance::SetPhase(Phase::kForward);
  provenance::Stamp s = provenance::Current();
  EXPECT_EQ(s.scope, "layers.0.attention.wq");
  EXPECT_EQ(s.op, "aten::mm");
  EXPECT_EQ(s.phase, Phase::kForward);
  EXPECT_TRUE(provenance::PopOp());
  EXPECT_TRUE(provenance::PopScope());
  s = provenance::Current();
  EXPECT_EQ(s.scope, "layers.0");
  EXPECT_EQ(s.op, "");
  EXPECT_TRUE(provenance::PopScope());
  EXPECT_FALSE(provenance::Current().scope.has_value());
}

TEST_F(ProvenanceTest, RootScopeIsTheEmptyStringNotAbsent) {
  provenance::PushScope("");
  provenance::Stamp s = provenance::Current();
  ASSERT_TRUE(s.scope.has_value());
  EXPECT_EQ(*s.scope, "");
}

TEST_F(ProvenanceTest, PopWithoutPushIsIgnoredAndCounted) {
  EXPECT_FALSE(provenance::PopScope());
  EXPECT_FALSE(provenance::PopOp());
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kProvenanceUnmatchedPops), 2u);
  provenance::PushScope("fc1");
  EXPECT_EQ(provenance::Current().scope, "fc1");  // the stack still works afterwards
}

TEST_F(ProvenanceTest, LongNamesAreCutAtAUtf8BoundaryAndCounted) {
  // 511 ASCII bytes then a 2-byte character straddling the 512-byte cap.
  std::string name(kProvenanceMaxBytes - 1, 'a');
  name += "\xc3\xa9";  // é
  name += std::string(100000, 'b');
  provenance::PushScope(name);
  const provenance::Stamp s = provenance::Current();
  ASSERT_TRUE(s.scope.has_value());
  EXPECT_EQ(s.scope->size(), kProvenanceMaxBytes - 1);
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kProvenanceCapped), 1u);
}

TEST_F(ProvenanceTest, DeepStacksKeepCountingDepth) {
  for (size_t i = 0; i < provenance::kMaxDepth + 10; ++i) provenance::PushScope("m" + std::to_string(i));
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kProvenanceCapped), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_TRUE(provenance::PopScope());
  EXPECT_EQ(provenance::Current().scope, "m" + std::to_string(provenance::kMaxDepth - 1));
  for (size_t i = 0; i < provenance::kMaxDepth; ++i) EXPECT_TRUE(provenance::PopScope());
  EXPECT_FALSE(provenance::PopScope());
}

TEST_F(ProvenanceTest, PhaseWords) {
  EXPECT_TRUE(provenance::SetPhase(std::string_view("backward")));
  EXPECT_EQ(provenance::Current().phase, Phase::kBackward);
  EXPECT_FALSE(provenance::SetPhase(std::string_view("Backward")));  // unchanged on a bad word
  EXPECT_EQ(provenance::Current().phase, Phase::kBackward);
  EXPECT_TRUE(provenance::SetPhase(std::string_view("")));
  EXPECT_EQ(provenance::Current().phase, Phase::kNone);
}

TEST_F(ProvenanceTest, StateIsPerThread) {
  provenance::PushScope("main.module");
  std::string other_scope = "unset";
  std::thread t([&] {
    other_scope = provenance::Current().scope.value_or("<none>");
    provenance::PushScope("autograd.thread");
  });
  t.join();
  EXPECT_EQ(other_scope, "<none>");
  EXPECT_EQ(provenance::Current().scope, "main.module");
}

TEST_F(ProvenanceTest, EngineStampsEachCapturedLaunchWithItsThreadsState) {
  settings::Config config = testing::ConfigFrom({{"NUMTRACE_STEPS", "0"}});
  HostDevice device;
  testing::MemorySink sink;
  Engine engine(config, &device, &sink);
  std::vector<float> in(64, 1.0f), out(64, 0.0f);
  engine.OnAlloc({reinterpret_cast<uint64_t>(in.data()), in.size() * 4, AllocKind::kPlain, 0});
  engine.OnAlloc({reinterpret_cast<uint64_t>(out.data()), out.size() * 4, AllocKind::kPlain, 0});
  auto launch = [&](uint64_t fn) {
    testing::LaunchBuilder b("_Z3addPfS_i", fn);
    b.Pointer(in.data()).Pointer(out.data()).U32(64);
    engine.OnLaunchEnter(b.event());
    for (float& v : out) v += 1.0f;
    engine.OnLaunch(b.event());
  };
  launch(1);  // nothing announced: no provenance fields
  provenance::PushScope("layers.1.fc");
  provenance::PushOp("aten::addmm");
  provenance::SetPhase(Phase::kForward);
  provenance::SetSrc("model.py:42");
  launch(1);
  provenance::SetSrc("");
  // A backward launch from another thread (autograd's) with its own state;
  // non-UTF-8 bytes pass through and are escaped when written.
  std::thread t([&] {
    provenance::PushScope("layers.\xff.fc");
    provenance::SetPhase(Phase::kBackward);
    launch(1);
  });
  t.join();
  engine.Shutdown();
  ASSERT_EQ(sink.kernels.size(), 3u);
  EXPECT_FALSE(sink.kernels[0].scope.has_value());
  EXPECT_EQ(sink.kernels[0].phase, Phase::kNone);
  EXPECT_EQ(sink.kernels[1].scope, "layers.1.fc");
  EXPECT_EQ(sink.kernels[1].op, "aten::addmm");
  EXPECT_EQ(sink.kernels[1].phase, Phase::kForward);
  EXPECT_EQ(sink.kernels[1].src, "model.py:42");
  EXPECT_EQ(sink.kernels[2].src, "");
  EXPECT_EQ(sink.kernels[2].scope, "layers.\xff.fc");
  EXPECT_EQ(sink.kernels[2].op, "");
  EXPECT_EQ(sink.kernels[2].phase, Phase::kBackward);

  std::string line;
  AppendJsonLine(sink.kernels[1], &line);
  EXPECT_NE(line.find(R"("scope":"layers.1.fc","op":"aten::addmm","phase":"forward","src":"model.py:42")"),
            std::string::npos) << line;
  line.clear();
  AppendJsonLine(sink.kernels[2], &line);
  EXPECT_NE(line.find(R"("scope":"layers.\u00ff.fc","phase":"backward")"), std::string::npos) << line;
  line.clear();
  AppendJsonLine(sink.kernels[0], &line);
  EXPECT_EQ(line.find("scope"), std::string::npos) << line;
  EXPECT_EQ(line.find("phase"), std::string::npos) << line;
}

TEST_F(ProvenanceTest, CompiledKernelsTakeTheOpsTheyWereGeneratedFrom) {
  settings::Config config = testing::ConfigFrom({{"NUMTRACE_STEPS", "0"}});
  HostDevice device;
  testing::MemorySink sink;
  Engine engine(config, &device, &sink);
  std::vector<float> buf(16, 1.0f);
  engine.OnAlloc({reinterpret_cast<uint64_t>(buf.data()), buf.size() * 4, AllocKind::kPlain, 0});
  auto launch = [&](const char* symbol, uint64_t fn) {
    testing::LaunchBuilder b(symbol, fn);
    b.Pointer(buf.data()).U32(16);
    engine.OnLaunchEnter(b.event());
    buf[0] += 1.0f;
    engine.OnLaunch(b.event());
  };
  provenance::SetKernelOps("triton_poi_fused_addmm_relu_0", "aten::addmm+aten::relu");
  // Inside a compiled region the thread's state is the caller's: the scope
  // stays, the op is the kernel's own.
  provenance::PushScope("");
  provenance::PushOp("aten::compiled_caller");
  launch("triton_poi_fused_addmm_relu_0", 7);
  launch("_Z5otherPf", 8);
  engine.Shutdown();
  ASSERT_EQ(sink.kernels.size(), 2u);
  EXPECT_EQ(sink.kernels[0].op, "aten::addmm+aten::relu");
  EXPECT_EQ(sink.kernels[0].scope, "");
  EXPECT_EQ(sink.kernels[1].op, "aten::compiled_caller");
}

}  // namespace
}  // namespace numtrace::shim
