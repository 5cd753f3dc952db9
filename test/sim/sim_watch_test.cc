// Watch mode end to end on the simulated loop: digests of every launch on
// every step through the real runtime, engine and writer, read back and
// compared by the step finder (analyzer/judge/step_finder.h).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/step_finder.h"
#include "common/format/digest.h"
#include "test/sim/sim_test_util.h"

namespace numtrace::sim {
namespace {

using analyzer::StepsResult;
using analyzer::Trace;

constexpr uint64_t kWatchKernelsPerStep = 15;

Trace Watch(const MlpOptions& o, const std::string& dir, const std::string& mode = "full") {
  return ReadRun(RunWithEnv(o, {{"NUMTRACE_WATCH", mode}}, FreshDir(dir)));
}

MlpOptions Steps(int n) {
  MlpOptions o;
  o.steps = n;
  return o;
}

TEST(SimWatchTest, EveryStepGetsOneDigestOfEveryLaunchAndNoKernelRecords) {
  Trace t = Watch(Steps(5), "a");
  EXPECT_TRUE(t.kernels.empty());  // no step in full unless NUMTRACE_STEPS asks
  ASSERT_EQ(t.digests.size(), 5u);
  for (size_t i = 0; i < t.digests.size(); ++i) {
    EXPECT_EQ(t.digests[i].step, static_cast<int64_t>(i));
    EXPECT_EQ(t.digests[i].kernels, kWatchKernelsPerStep);
    EXPECT_EQ(t.digests[i].lost, 0u);
    EXPECT_FALSE(t.digests[i].nonfinite.has_value());
  }
  ASSERT_TRUE(t.header.capture.has_value());
  EXPECT_EQ(t.header.capture->watch, "full");
  EXPECT_FALSE(t.truncated);
  // The first launch of each step is the loss fill; the weights change, so steps differ.
  EXPECT_EQ(t.strings.View(t.digest_names[0]), t.strings.View(t.digest_names[kWatchKernelsPerStep]));
  EXPECT_NE(t.digests[0].hash, t.digests[1].hash);
}

TEST(SimWatchTest, FullDigestsAreTheKernelRecordsBufferHashesFolded) {
  // Step 1 in full and digested: each launch's digest is KernelDigest of its record's buffer hashes.
  Trace t = ReadRun(RunWithEnv(Steps(3), {{"NUMTRACE_WATCH", "full"}, {"NUMTRACE_STEPS", "1"}}, FreshDir("a")));
  ASSERT_EQ(t.kernels.size(), kWatchKernelsPerStep);
  ASSERT_EQ(t.digests.size(), 3u);
  const analyzer::StepDigest& d = t.digests[1];
  ASSERT_EQ(d.kernels, kWatchKernelsPerStep);
  for (uint64_t i = 0; i < kWatchKernelsPerStep; ++i) {
    std::vector<uint64_t> hashes;
    for (const analyzer::Buffer& b : t.BuffersOf(t.kernels[i])) hashes.push_back(b.stats.hash);
    EXPECT_EQ(t.digest_hashes[d.first + i], KernelDigest(hashes)) << "launch " << i;
    EXPECT_EQ(t.strings.View(t.digest_names[d.first + i]), t.Name(t.kernels[i]));
  }
  // The step finder's self-check finds the same: nothing to say.
  std::optional<StepsResult> s = analyzer::FindSteps(t, t);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->notes.empty()) << s->notes.front();
}

TEST(SimWatchTest, IdenticalRunsHaveEqualStepsAndAnIdenticalVerdict) {
  Trace a = Watch(Steps(300), "a"), b = Watch(Steps(300), "b");
  std::optional<StepsResult> s = analyzer::FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 300u);
  EXPECT_FALSE(s->first_differing.has_value());
  EXPECT_TRUE(s->notes.empty()) << s->notes.front();
  EXPECT_EQ(analyzer::Judge(a, b, analyzer::Align(a, b)).verdict, Verdict::kIdentical);
}

TEST(SimWatchTest, PerturbedAtStep137FindsStep137AndTheLaunchAFullCaptureNamesFirst) {
  MlpOptions ref = Steps(300), changed = ref;
  changed.perturb_layer = 2;
  changed.perturb_step = 137;
  Trace a = Watch(ref, "a"), b = Watch(changed, "b");
  std::optional<StepsResult> s = analyzer::FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 300u);
  ASSERT_TRUE(s->first_differing.has_value());
  EXPECT_EQ(*s->first_differing, 137);
  EXPECT_FALSE(s->first_is_structure);
  // Every later step differs too (the change reaches the weights).
  EXPECT_EQ(s->differing, 300u - 137u);

  // A full capture of step 137 on both sides: its first divergence is that launch.
  Env full{{"NUMTRACE_STEPS", "137"}};
  Trace fa = ReadRun(RunWithEnv(ref, full, FreshDir("fa")));
  Trace fb = ReadRun(RunWithEnv(changed, full, FreshDir("fb")));
  analyzer::DiffResult r = analyzer::Judge(fa, fb, analyzer::Align(fa, fb));
  ASSERT_TRUE(r.first_divergence.has_value());
  const uint64_t seq = fa.kernels[r.alignment.pairs[*r.first_divergence].a].seq;
  EXPECT_EQ(s->first_index, seq);
  ASSERT_TRUE(s->a_name.has_value());
  EXPECT_EQ(a.strings.View(*s->a_name), fa.Name(fa.kernels[seq]));
}

TEST(SimWatchTest, NanAtStep211InBIsBsFirstNonfiniteStep) {
  MlpOptions ref = Steps(300), changed = ref;
  changed.nan_at_step = 211;
  Trace a = Watch(ref, "a"), b = Watch(changed, "b");
  std::optional<StepsResult> s = analyzer::FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->nonfinite_a.has_value());
  ASSERT_TRUE(s->nonfinite_b.has_value());
  EXPECT_EQ(s->nonfinite_b->step, 211);
  EXPECT_EQ(s->nonfinite_b->index, 4u);  // the layer-2 bias add, the 5th launch of the step
  EXPECT_EQ(*s->first_differing, 211);
  EXPECT_EQ(s->strip[211], analyzer::StepState::kNonfinite);
  EXPECT_EQ(s->strip[210], analyzer::StepState::kEqual);
}

TEST(SimWatchTest, TheWatchTraceStaysUnder64BytesPerLaunch) {
  const std::string dir = FreshDir("a");
  SimRun run = RunWithEnv(Steps(300), {{"NUMTRACE_WATCH", "full"}}, dir);
  const uint64_t bytes = std::filesystem::file_size(run.trace_path);
  const uint64_t launches = 300 * kWatchKernelsPerStep;
  EXPECT_LE(bytes, 64 * launches) << bytes << " bytes for " << launches << " launches";
  RecordProperty("bytes_per_launch", std::to_string(double(bytes) / double(launches)));
}

TEST(SimWatchTest, SampledModeSaysSoAndFindsTheSameStep) {
  MlpOptions ref = Steps(40), changed = ref;
  changed.perturb_layer = 1;
  changed.perturb_step = 17;
  Trace a = Watch(ref, "a", "sampled"), b = Watch(changed, "b", "sampled");
  EXPECT_EQ(a.header.capture->watch, "sampled");
  std::optional<StepsResult> s = analyzer::FindSteps(a, b);
  ASSERT_TRUE(s && s->first_differing);
  EXPECT_EQ(*s->first_differing, 17);
  // Sampled against full: said, never silently compared as if alike.
  Trace f = Watch(ref, "f", "full");
  std::optional<StepsResult> mixed = analyzer::FindSteps(a, f);
  ASSERT_TRUE(mixed.has_value());
  ASSERT_FALSE(mixed->notes.empty());
  // The simulator's buffers are all within the sample: the digests agree,
  // and the note says so rather than that they cannot match (hostile round 4, 12).
  EXPECT_EQ(mixed->differing, 0u);
  EXPECT_NE(mixed->notes[0].find("A was digested 'sampled', B 'full': they agree"), std::string::npos)
      << mixed->notes[0];
}

TEST(SimWatchTest, NondeterministicRunsDifferAtStep0InTheAtomicsKernel) {
  MlpOptions o = Steps(4);
  o.nondeterministic = true;
  Trace a = Watch(o, "a"), b = Watch(o, "b");
  std::optional<StepsResult> s = analyzer::FindSteps(a, b);
  ASSERT_TRUE(s && s->first_differing);
  EXPECT_EQ(*s->first_differing, 0);
  ASSERT_TRUE(s->a_name.has_value());
  EXPECT_NE(a.strings.View(*s->a_name).find("indexFuncSmallIndex"), std::string::npos);
}

TEST(SimWatchTest, AWatchTraceAgainstAPlainTraceSaysOneSideHasNoDigests) {
  Trace w = Watch(Steps(3), "w");
  Trace plain = ReadRun(RunWithEnv(Steps(3), {{"NUMTRACE_STEPS", "1"}}, FreshDir("p")));
  std::optional<StepsResult> s = analyzer::FindSteps(w, plain);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 0u);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_NE(s->notes[0].find("B ("), std::string::npos);
  EXPECT_NE(s->notes[0].find("holds no digest records"), std::string::npos) << s->notes[0];
}

TEST(SimWatchTest, ATraceCutMidRunComparesTheStepsBeforeTheCut) {
  const std::string dir = FreshDir("killed");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    MlpOptions o = Steps(50);
    o.kill_after_launches = 30 * kWatchKernelsPerStep + 3;
    RunWithEnv(o, {{"NUMTRACE_WATCH", "full"}}, dir);
    _exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  SimRun run;
  run.trace_path = dir + "/rank_0.ntrace.jsonl";
  Trace cut = ReadRun(run);
  EXPECT_TRUE(cut.truncated);
  EXPECT_LE(cut.digests.size(), 30u);
  Trace whole = Watch(Steps(50), "whole");
  std::optional<StepsResult> s = analyzer::FindSteps(whole, cut);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, cut.digests.size());
  EXPECT_FALSE(s->first_differing.has_value());
  bool said = false;
  for (const std::string& n : s->notes) said = said || n.find("was cut short") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace numtrace::sim
