// Watch mode in the engine (shim/engine/watch.h), fed as the CUPTI layer
// feeds it, on the host reference device: one digest record per step, in
// launch order; launches that cannot be digested are counted as lost, never
// silently equal; the sample of `sampled` mode is the documented one.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "common/format/digest.h"
#include "common/settings/config.h"
#include "shim/device/host_device.h"
#include "shim/engine/engine.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::ConfigFrom;
using testing::LaunchBuilder;
using testing::WatchSink;

struct WatchEngine {
  explicit WatchEngine(const char* mode) : config(ConfigFrom({{"NUMTRACE_WATCH", mode}})) {
    engine = std::make_unique<Engine>(config, &device, &sink);
    engine->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), buf.size() * sizeof(float)});
  }
  void Launch(const char* symbol, uint64_t fn, float write, bool capturing = false) {
    LaunchBuilder b(symbol, fn);
    b.Pointer(buf.data()).Capturing(capturing);
    engine->OnLaunchEnter(b.event());
    for (float& v : buf) v = write;
    engine->OnLaunch(b.event());
  }
  settings::Config config;
  HostDevice device;
  WatchSink sink;
  std::vector<float> buf = std::vector<float>(64 * 1024, 0.0f);  // 256 KiB: sampled, not whole
  std::unique_ptr<Engine> engine;
};

TEST(WatchTest, AResumedJobsFirstStepIsRecordedUnderTheJobsNumber) {
  // The job says its step number only at the end of its first step
  // (numtrace_mark_step_to(11): the optimizer's count after a resume at 10),
  // after some of that step's launches were already folded.
  WatchEngine w("full");
  w.Launch("_Z4fillPf", 1, 1.0f);
  w.engine->Pump();  // the writer folds the first launch under the number it ran with
  w.Launch("_Z4gemmPf", 2, 2.0f);
  w.engine->OnStepMarkTo(11);
  w.Launch("_Z4fillPf", 1, 3.0f);
  w.engine->OnStepMarkTo(12);
  w.Launch("_Z4fillPf", 1, 4.0f);
  w.engine->Shutdown();
  ASSERT_EQ(w.sink.digests.size(), 3u);
  EXPECT_EQ(w.sink.digests[0].step, 10);
  EXPECT_EQ(w.sink.digests[0].kernels, 2u);  // one record, both launches
  EXPECT_EQ(w.sink.digests[1].step, 11);
  EXPECT_EQ(w.sink.digests[2].step, 12);
}

TEST(WatchTest, OneDigestPerStepInLaunchOrderWithNameIds) {
  WatchEngine w("full");
  EXPECT_FALSE(w.engine->Quiet());  // every launch must be decoded
  w.engine->OnStepMark();           // step 0 had no launch: no record
  w.Launch("_Z4fillPf", 1, 1.0f);
  w.Launch("_Z4gemmPf", 2, 2.0f);
  w.engine->OnStepMark();
  w.Launch("_Z4fillPf", 1, 1.0f);
  w.engine->Shutdown();
  ASSERT_EQ(w.sink.digests.size(), 2u);
  const DigestRecord& d1 = w.sink.digests[0];
  EXPECT_EQ(d1.step, 1);
  EXPECT_EQ(d1.kernels, 2u);
  EXPECT_EQ(d1.names, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(d1.hash, StepHash(d1.kernel_hashes));
  EXPECT_EQ(w.sink.digests[1].names, (std::vector<uint64_t>{0}));
  ASSERT_EQ(w.sink.names.size(), 2u);  // each name once
  EXPECT_EQ(w.sink.names[1].name, "_Z4gemmPf");
  // The same bytes give the same digest: step 2's fill equals step 1's.
  EXPECT_EQ(w.sink.digests[1].kernel_hashes[0], d1.kernel_hashes[0]);
  EXPECT_NE(d1.kernel_hashes[0], d1.kernel_hashes[1]);
  EXPECT_TRUE(w.sink.kernels.empty());
}

// Review round 4, finding 5: in watch mode every launch is decoded and
// noted by the kernel activity check, which settles (and forgets) only when
// told a step ended. That was told for selected steps only, and --watch
// alone selects none: the check's ids and records grew for the whole job.
TEST(WatchTest, EveryWatchedStepEndLetsTheActivityCheckSettle) {
  WatchEngine w("full");
  for (int step = 0; step < 3; ++step) {
    w.Launch("_Z4fillPf", 1, 1.0f);
    w.engine->OnStepMark();
    EXPECT_TRUE(w.engine->TakeStepEnded()) << "step " << step;
    EXPECT_FALSE(w.engine->TakeStepEnded()) << "once per step";
  }
  w.engine->Shutdown();
}

TEST(WatchTest, ANanLeftByALaunchIsItsIndex) {
  WatchEngine w("full");
  w.engine->OnStepMark();
  w.Launch("_Z1aPf", 1, 1.0f);
  w.Launch("_Z1bPf", 2, std::numeric_limits<float>::quiet_NaN());
  w.engine->Shutdown();
  ASSERT_EQ(w.sink.digests.size(), 1u);
  EXPECT_EQ(w.sink.digests[0].nonfinite, 1u);
}

TEST(WatchTest, LaunchesThatCannotBeDigestedAreLostNotEqual) {
  WatchEngine w("full");
  w.engine->OnStepMark();
  w.device.FailNextEnqueues(1);
  w.Launch("_Z1aPf", 1, 1.0f);                      // the device refuses
  w.Launch("_Z1bPf", 2, 2.0f, /*capturing=*/true);  // into a CUDA graph: not measured
  w.Launch("_Z1cPf", 3, 3.0f);
  w.engine->Shutdown();
  ASSERT_EQ(w.sink.digests.size(), 1u);
  EXPECT_EQ(w.sink.digests[0].lost, 2u);
  EXPECT_EQ(w.sink.digests[0].kernel_hashes[0], 0u);
  EXPECT_EQ(w.sink.digests[0].kernel_hashes[1], 0u);
  EXPECT_NE(w.sink.digests[0].kernel_hashes[2], 0u);
}

// A measurement the GPU failed counts as lost (its slot was never done:
// the step's record waited for it until exit before).
TEST(WatchTest, AFailedMeasurementIsLostAndTheStepStillGoesOut) {
  WatchEngine w("full");
  w.engine->OnStepMark();
  w.device.FailNextResults(1);
  w.Launch("_Z1aPf", 1, 1.0f);
  w.Launch("_Z1cPf", 3, 3.0f);
  w.engine->OnStepMark();
  w.engine->Pump();
  ASSERT_EQ(w.sink.digests.size(), 1u) << "written at the step's end, not at exit";
  EXPECT_EQ(w.sink.digests[0].lost, 1u);
  EXPECT_EQ(w.sink.digests[0].kernel_hashes[0], 0u);
  EXPECT_NE(w.sink.digests[0].kernel_hashes[1], 0u);
  w.engine->Shutdown();
}

TEST(WatchTest, CudaGraphLaunchesAreNotedOnceAStepNeverSilentlySkipped) {
  WatchEngine w("full");
  w.engine->OnStepMark();
  w.engine->OnGraphLaunch({0xabc, 7});
  w.engine->OnGraphLaunch({0xabc, 7});
  w.engine->OnStepMark();
  w.engine->OnGraphLaunch({0xabc, 7});
  w.engine->Shutdown();
  ASSERT_EQ(w.sink.notes.size(), 2u);
  EXPECT_NE(w.sink.notes[0].msg.find("in step 1: the kernels inside it were not measured"), std::string::npos)
      << w.sink.notes[0].msg;
  EXPECT_NE(w.sink.notes[1].msg.find("in step 2"), std::string::npos);
}

TEST(WatchTest, SampledDigestsReadTheDocumentedWindowsOnly) {
  WatchEngine w("sampled");
  w.engine->OnStepMark();
  w.Launch("_Z1aPf", 1, 1.0f);
  const uint64_t before = w.device.enqueued();
  w.buf[100 * 1024 / 4] = 5.0f;  // a byte outside every window: (100 KiB into 256 KiB)
  {
    LaunchBuilder b("_Z1aPf", 1);
    b.Pointer(w.buf.data());
    w.engine->OnLaunchEnter(b.event());
    w.engine->OnLaunch(b.event());
  }
  w.buf[0] = 7.0f;  // inside the head window
  {
    LaunchBuilder b("_Z1aPf", 1);
    b.Pointer(w.buf.data());
    w.engine->OnLaunchEnter(b.event());
    w.engine->OnLaunch(b.event());
  }
  EXPECT_EQ(w.device.enqueued(), before + 2);
  w.engine->Shutdown();
  const DigestRecord& d = w.sink.digests.at(0);
  ASSERT_EQ(d.kernels, 3u);
  EXPECT_EQ(d.kernel_hashes[0], d.kernel_hashes[1]);  // the change was not in the sample
  EXPECT_NE(d.kernel_hashes[1], d.kernel_hashes[2]);
}

TEST(WatchTest, MoreLaunchesInFlightThanTheRingHeldKeepTheirOrder) {
  WatchEngine w("full");
  w.device.SetHoldResults(true);  // nothing completes until the exit's drain
  w.engine->OnStepMark();
  for (int i = 0; i < 5000; ++i) {  // more than the ring's first 4096 slots
    LaunchBuilder b(i % 2 ? "_Z3oddPf" : "_Z4evenPf", 1 + i % 2);
    b.Pointer(w.buf.data());
    w.engine->OnLaunchEnter(b.event());
    w.engine->OnLaunch(b.event());
    if (i % 1000 == 0) w.engine->Pump();  // the writer thread: nothing is ready yet
  }
  EXPECT_TRUE(w.sink.digests.empty());
  w.engine->Shutdown();
  ASSERT_EQ(w.sink.digests.size(), 1u);
  const DigestRecord& d = w.sink.digests[0];
  ASSERT_EQ(d.kernels, 5000u);
  EXPECT_EQ(d.lost, 0u);
  for (size_t i = 0; i < d.names.size(); ++i) ASSERT_EQ(d.names[i], i % 2) << i;
}

TEST(WatchTest, TheSampleIsAtMostOneThirtySecondOfABufferPlusALine) {
  SampleWindow w[kSampleWindows];
  EXPECT_EQ(SampleWindows(4096, w), 1u);  // small buffers whole
  EXPECT_EQ(w[0].bytes, 4096u);
  for (uint64_t bytes : {uint64_t{65537}, uint64_t{1} << 20, (uint64_t{1} << 30) + 77}) {
    ASSERT_EQ(SampleWindows(bytes, w), kSampleWindows);
    uint64_t total = 0;
    for (uint32_t i = 0; i < kSampleWindows; ++i) {
      total += w[i].bytes;
      EXPECT_EQ(w[i].offset % 128, 0u);
      EXPECT_LE(w[i].offset + w[i].bytes, bytes);
      if (i > 0) EXPECT_GE(w[i].offset, w[i - 1].offset + w[i - 1].bytes);  // no overlap
    }
    EXPECT_EQ(w[0].offset, 0u);
    EXPECT_EQ(w[kSampleWindows - 1].offset + w[kSampleWindows - 1].bytes, bytes);  // both ends
    EXPECT_LE(total, bytes / 32 + 128 * kSampleWindows) << bytes;
  }
}

}  // namespace
}  // namespace numtrace::shim
