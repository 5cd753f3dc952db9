// The step finder and its reports on hand-made watch traces: written with
// the shim's own record writer, read with the analyzer's reader, so the
// records' text is the contract's. Bad input (undefined name ids, counts
// that disagree, different jobs, steps that do not line up, a plain trace
// against a watch trace) gives one clear line, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/step_finder.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/steps_report.h"
#include "analyzer/report/terminal_summary.h"
#include "common/format/digest.h"
#include "common/format/jsonl_writer.h"
#include "simdjson.h"
#include "test/analyzer/report/chromium.h"

namespace numtrace::analyzer {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

struct StepSpec {
  int64_t step;
  std::vector<uint64_t> hashes;
  std::vector<uint64_t> names;  // ids 0..2 of kNames
  std::optional<uint64_t> nonfinite;
  uint64_t lost = 0;  // launches the device could not digest (their hash 0)
};

constexpr const char* kNames[] = {"fill_kernel", "ampere_sgemm_128x64_nn", "softmax_kernel"};

std::string WatchText(const std::vector<StepSpec>& steps, bool footer = true, std::string watch = "full",
                      std::string label = "A") {
  std::string out;
  TraceHeader h;
  h.producer = "test";
  h.run = RunInfo{label, {"python", "train.py", "--seed", "1"}, 1, 0, 1, "host", "t"};
  h.capture = CaptureInfo{{}, "changed", "mode=mark steps=none", {}, watch, {}};
  AppendJsonLine(h, &out);
  for (uint64_t id = 0; id < 3; ++id) AppendJsonLine(KernelNameRecord{id, kNames[id]}, &out);
  for (const StepSpec& s : steps) {
    DigestRecord d;
    d.step = s.step;
    d.kernel_hashes = s.hashes;
    d.names = s.names;
    d.kernels = s.hashes.size();
    d.hash = StepHash(s.hashes);
    d.nonfinite = s.nonfinite;
    d.lost = s.lost;
    AppendJsonLine(d, &out);
  }
  if (footer) AppendJsonLine(FooterRecord{}, &out);
  return out;
}

Trace Read(const std::string& text, const std::string& path) {
  absl::StatusOr<Trace> t = ReadTraceBytes(text, path, FindImporter("numtrace"));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : Trace{};
}

std::vector<StepSpec> Job(int n, int64_t first = 0) {
  std::vector<StepSpec> steps;
  for (int i = 0; i < n; ++i) {
    const uint64_t s = static_cast<uint64_t>(first + i);
    steps.push_back({first + i, {0x100 + s, 0x200 + s, 0x300 + s}, {0, 1, 2}, std::nullopt});
  }
  return steps;
}

TEST(StepFinderTest, ReadsDigestsAndNamesById) {
  Trace t = Read(WatchText(Job(3)), "runA/rank_0.ntrace.jsonl");
  ASSERT_EQ(t.digests.size(), 3u);
  EXPECT_EQ(t.digests[2].kernels, 3u);
  EXPECT_EQ(t.digest_hashes[t.digests[2].first + 1], 0x202u);
  EXPECT_EQ(t.strings.View(t.digest_names[t.digests[2].first + 1]), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(t.header.capture->watch, "full");
}

// --min-bytes is compared in bytes: "4k" and "4096" leave out the same
// buffers (no note), "4k" and the default 0 do not (a note).
TEST(StepFinderTest, MinBytesIsComparedInBytesNotAsText) {
  auto with = [](Trace t, std::string value) {
    if (!value.empty()) t.header.capture->settings.push_back({"NUMTRACE_MIN_BYTES", value});
    return t;
  };
  const Trace plain = Read(WatchText(Job(2)), "a/rank_0.ntrace.jsonl");
  auto notes = [&](const std::string& va, const std::string& vb) {
    std::optional<StepsResult> r = FindSteps(with(Read(WatchText(Job(2)), "a/rank_0.ntrace.jsonl"), va),
                                             with(Read(WatchText(Job(2)), "b/rank_0.ntrace.jsonl"), vb));
    EXPECT_TRUE(r.has_value());
    std::string all;
    for (const std::string& n : r->notes) all += n + "\n";
    return all;
  };
  ASSERT_TRUE(plain.header.capture.has_value());
  EXPECT_THAT(notes("4k", "4096"), ::testing::Not(HasSubstr("min-bytes")));
  EXPECT_THAT(notes("0", ""), ::testing::Not(HasSubstr("min-bytes")));
  EXPECT_THAT(notes("4k", ""), HasSubstr("A was captured with --min-bytes 4k, B with --min-bytes 0"));
  EXPECT_THAT(notes("1MiB", "1m"), ::testing::Not(HasSubstr("min-bytes")));
}

TEST(StepFinderTest, FindsTheFirstDifferingStepAndLaunch) {
  auto b_steps = Job(10);
  b_steps[6].hashes[2] = 0xdead;
  b_steps[7].hashes[1] = 0xbeef;
  Trace a = Read(WatchText(Job(10)), "runA/rank_0.ntrace.jsonl");
  Trace b = Read(WatchText(b_steps, true, "full", "B"), "runB/rank_0.ntrace.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s && s->first_differing);
  EXPECT_EQ(*s->first_differing, 6);
  EXPECT_EQ(s->first_index, 2u);
  EXPECT_EQ(s->differing, 2u);
  EXPECT_EQ(a.strings.View(*s->a_name), "softmax_kernel");
  EXPECT_TRUE(s->notes.empty());

  // The summary: steps section, capture commands from the headers, verdict diverged.
  DiffResult r = Judge(a, b, Align(a, b));
  r.steps = s;
  r.verdict = Verdict::kDiverged;
  DiffReport report{"runA", "runB", false, {{0, &a, &b, &r}}};
  const std::string json = JsonSummary(report);
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(json);
  EXPECT_EQ(int64_t(root["steps"]["first_differing"]), 6);
  EXPECT_EQ(uint64_t(root["steps"]["first_kernel"]["index"]), 2u);
  EXPECT_EQ(std::string_view(root["steps"]["first_kernel"]["b_name"]), "softmax_kernel");
  EXPECT_EQ(std::string_view(root["steps"]["capture"]),
            "numtrace run -o runA-step6 --steps 6 --label A -- python train.py --seed 1");
  EXPECT_EQ(std::string_view(root["steps"]["capture_b"]),
            "numtrace run -o runB-step6 --steps 6 --label B -- python train.py --seed 1");
  const std::string term = TerminalSummary(report, TerminalOptions{});
  EXPECT_THAT(term, HasSubstr("steps: 10 compared by digest, 2 differ; first differing step: 6"));
  EXPECT_THAT(term, HasSubstr("numtrace diff runA-step6 runB-step6"));
}

// Issue 24: watch traces at operator level (run --ops --watch) digest
// operator calls: the lines say "operator call", not "launch", and the
// printed capture repeats the level as `--ops` alone (the value an option
// implies) - a value other than the implied one is `--ops=VALUE`, never a
// separate word the launcher would take for the job's command.
TEST(StepFinderTest, OperatorLevelStepsAreSaidInOperatorCalls) {
  auto with_level = [](std::string text, std::string_view level) {
    Trace t = Read(text, "x/rank_0.ntrace.jsonl");
    t.header.capture->level = level == "ops" ? CaptureLevel::kOps : CaptureLevel::kKernels;
    t.header.capture->settings = {{"NUMTRACE_LEVEL", std::string(level)}};
    return t;
  };
  auto b_steps = Job(10);
  b_steps[6].hashes[2] = 1;
  b_steps[7].nonfinite = 1;
  for (std::string_view level : {"ops", "kernels"}) {
    Trace a = with_level(WatchText(Job(10)), level), b = with_level(WatchText(b_steps, true, "full", "B"), level);
    a.path = "runA/rank_0.ntrace.jsonl";
    b.path = "runB/rank_0.ntrace.jsonl";
    DiffResult r = Judge(a, b, Align(a, b));
    r.steps = FindSteps(a, b);
    r.verdict = Verdict::kDiverged;
    DiffReport report{"runA", "runB", false, {{0, &a, &b, &r}}};
    const std::string term = TerminalSummary(report, TerminalOptions{});
    if (level == "ops") {
      EXPECT_THAT(term, HasSubstr("first differing operator call: index 2 of the step"));
      EXPECT_THAT(term, HasSubstr("first NaN/Inf step in B: 7, operator call 1 "));
      EXPECT_THAT(term, HasSubstr("numtrace run -o runA-step6 --steps 6 --ops --label A --"));
      EXPECT_THAT(term, Not(HasSubstr("launch")));
    } else {
      EXPECT_THAT(term, HasSubstr("first differing launch: index 2 of the step"));
      EXPECT_THAT(term, HasSubstr("numtrace run -o runA-step6 --steps 6 --ops=kernels --label A --"));
    }
  }
}

TEST(StepFinderTest, DirectorySummariesRollUpTheRankThatDiffersFirst) {
  auto late = Job(10), early = Job(10);
  late[8].hashes[0] = 1;
  early[3].hashes[2] = 1;
  Trace a0 = Read(WatchText(Job(10)), "A/rank_0.ntrace.jsonl"), b0 = Read(WatchText(late), "B/rank_0.ntrace.jsonl");
  Trace a1 = Read(WatchText(Job(10)), "A/rank_1.ntrace.jsonl"), b1 = Read(WatchText(early), "B/rank_1.ntrace.jsonl");
  DiffResult r0 = Judge(a0, b0, Align(a0, b0)), r1 = Judge(a1, b1, Align(a1, b1));
  r0.steps = FindSteps(a0, b0);
  r1.steps = FindSteps(a1, b1);
  DiffReport report{"A", "B", true, {{0, &a0, &b0, &r0}, {1, &a1, &b1, &r1}}};
  EXPECT_EQ(RollUpRanks(report).steps_rank, 1);
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(JsonSummary(report));
  EXPECT_EQ(int64_t(root["steps"]["first_differing"]), 3);
  EXPECT_EQ(int64_t(root["ranks"].at(0)["steps"]["first_differing"]), 8);
  EXPECT_EQ(int64_t(root["ranks"].at(1)["steps"]["first_differing"]), 3);
}

// The HTML report of 10 steps against the same with step 6's launch 2
// changed and a NaN/Inf at launch 0 of step `nonfinite_step` in B.
std::string WatchReportHtml(int64_t nonfinite_step) {
  auto b_steps = Job(10);
  b_steps[6].hashes[2] = 0xdead;
  b_steps[nonfinite_step].nonfinite = 0;
  Trace a = Read(WatchText(Job(10)), "runA/rank_0.ntrace.jsonl");
  Trace b = Read(WatchText(b_steps, true, "full", "B"), "runB/rank_0.ntrace.jsonl");
  DiffResult r = Judge(a, b, Align(a, b));
  r.steps = FindSteps(a, b);
  DiffReport report{"runA", "runB", false, {{0, &a, &b, &r}}};
  return HtmlReport(report, {});
}

// The page's per-step strip, as a browser renders it.
TEST(StepFinderTest, TheHtmlReportDrawsTheStepStrip) {
  if (testing::Chromium().empty()) GTEST_SKIP() << "chromium not installed: browser checks skipped";
  const std::string dom = testing::DumpDom(WatchReportHtml(8), "steps_strip.html");
  EXPECT_THAT(dom, HasSubstr("10 steps compared, 1 differ; first differing step 6, launch 2 of the step"));
  EXPECT_THAT(dom, HasSubstr("title=\"step 6: differs\""));
  EXPECT_THAT(dom, HasSubstr("title=\"step 8: nonfinite\""));
  EXPECT_THAT(dom, HasSubstr("title=\"step 0: equal\""));
  EXPECT_THAT(dom, HasSubstr("numtrace run -o runA-step6 --steps 6 --label A -- python train.py --seed 1"));
  EXPECT_THAT(dom, HasSubstr("first NaN/Inf step in B: 8, launch 0 fill_kernel"));
}

TEST(StepFinderTest, IdenticalStepsAreIdenticalAndTheStripSaysEqual) {
  Trace a = Read(WatchText(Job(5)), "a.jsonl"), b = Read(WatchText(Job(5)), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 5u);
  EXPECT_FALSE(s->first_differing);
  EXPECT_EQ(s->strip, std::vector<StepState>(5, StepState::kEqual));
  EXPECT_FALSE(StepToCapture(*s).has_value());
}

TEST(StepFinderTest, KernelSequencesThatPartAreSaidAsSuchNotAsADigestMismatch) {
  auto b_steps = Job(4);
  b_steps[2].names[1] = 0;  // another kernel at launch 1
  b_steps[3].hashes.push_back(7), b_steps[3].names.push_back(2);  // one launch more
  Trace a = Read(WatchText(Job(4)), "a.jsonl"), b = Read(WatchText(b_steps), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s && s->first_differing);
  EXPECT_EQ(*s->first_differing, 2);
  EXPECT_TRUE(s->first_is_structure);
  EXPECT_EQ(s->first_index, 1u);
  EXPECT_EQ(s->strip[3], StepState::kStructure);
}

// Launch 0 is a launch like any other: another kernel there is a program
// change (the sequences part at 0), not a value change of the step.
TEST(StepFinderTest, AnotherKernelAtLaunchZeroIsAStructureChange) {
  auto b_steps = Job(4);
  b_steps[1].names[0] = 2;           // softmax_kernel where A runs fill_kernel
  b_steps[1].hashes[0] = 0x5000;     // another kernel, another digest
  Trace a = Read(WatchText(Job(4)), "a.jsonl"), b = Read(WatchText(b_steps), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s && s->first_differing);
  EXPECT_EQ(*s->first_differing, 1);
  EXPECT_TRUE(s->first_is_structure);
  EXPECT_EQ(s->first_index, 0u);
  EXPECT_EQ(s->strip[1], StepState::kStructure);
  EXPECT_EQ(a.strings.View(*s->a_name), "fill_kernel");
  EXPECT_EQ(b.strings.View(*s->b_name), "softmax_kernel");
}

// A launch the device could not digest (digest 0, counted in `lost`) is
// unknown: never a difference, and the comparison says it is incomplete.
TEST(StepFinderTest, ALostLaunchIsUnknownNeverADifference) {
  auto b_steps = Job(4);
  b_steps[2].hashes[1] = 0;
  b_steps[2].lost = 1;
  Trace a = Read(WatchText(Job(4)), "a.jsonl"), b = Read(WatchText(b_steps, true, "full", "B"), "b.jsonl");
  ASSERT_EQ(b.LostDigests(), 1u);
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 4u);
  EXPECT_FALSE(s->first_differing);
  EXPECT_EQ(s->differing, 0u);
  EXPECT_EQ(s->strip, std::vector<StepState>(4, StepState::kEqual));
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_THAT(s->notes[0], HasSubstr("1 launches of B were not digested"));
  EXPECT_THAT(s->notes[0], HasSubstr("the comparison is incomplete"));
  // A real difference in another launch of that step is still found.
  b_steps[2].hashes[2] = 0xdead;
  Trace c = Read(WatchText(b_steps, true, "full", "B"), "c.jsonl");
  s = FindSteps(a, c);
  ASSERT_TRUE(s && s->first_differing);
  EXPECT_EQ(*s->first_differing, 2);
  EXPECT_EQ(s->first_index, 2u);
  EXPECT_FALSE(s->first_is_structure);
}

TEST(StepFinderTest, DifferentJobsAreSaidInOneLine) {
  std::vector<StepSpec> other;
  for (int i = 0; i < 4; ++i) other.push_back({i, {1, 2}, {2, 2}, std::nullopt});
  Trace a = Read(WatchText(Job(4)), "a.jsonl"), b = Read(WatchText(other), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_THAT(s->notes[0], HasSubstr("no compared step has the same kernel sequence"));
}

TEST(StepFinderTest, StepNumbersThatDoNotLineUpAreComparedByNumberAndSaid) {
  Trace a = Read(WatchText(Job(10)), "a.jsonl");
  Trace resumed = Read(WatchText(Job(6, 4)), "b.jsonl");  // steps 4-9: resumed from a checkpoint
  std::optional<StepsResult> s = FindSteps(a, resumed);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 6u);
  EXPECT_FALSE(s->first_differing);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_THAT(s->notes[0], HasSubstr("step numbers do not line up: 4 steps of A and 0 of B"));
  // Counted, so the comparison is incomplete and never `identical` (diff_command, rank_diff).
  EXPECT_EQ(s->unpaired_a, 4u);
  EXPECT_EQ(s->unpaired_b, 0u);
  Trace later = Read(WatchText(Job(3, 100)), "c.jsonl");
  s = FindSteps(a, later);
  EXPECT_EQ(s->compared, 0u);
  EXPECT_THAT(s->notes[0], HasSubstr("no step number is in both traces: A has steps 0-9, B steps 100-102"));
}

TEST(StepFinderTest, AResumedRunNumberedFromZeroIsSaid) {
  // B: A resumed after step 4, its steps numbered from 0 (a job whose
  // optimizer keeps no step count); its first step also loaded the checkpoint.
  Trace a = Read(WatchText(Job(10)), "a.jsonl");
  std::vector<StepSpec> steps = Job(6, 4);
  for (StepSpec& s : steps) s.step -= 4;
  steps[0].hashes[0] = 0x999;
  Trace b = Read(WatchText(steps), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->first_differing, 0);
  EXPECT_THAT(s->notes, Contains(HasSubstr("B's step 1 has the digests of A's step 5, and the step after it too: "
                                           "B looks resumed from a checkpoint")));
  // The other way round, A is the resumed one.
  s = FindSteps(b, a);
  EXPECT_THAT(s->notes, Contains(HasSubstr("A's step 1 has the digests of B's step 5")));
  // Runs whose steps repeat one digest (nothing changes from step to step)
  // are not taken for a resume.
  std::vector<StepSpec> same(6, StepSpec{0, {0x1, 0x2, 0x3}, {0, 1, 2}, std::nullopt});
  for (int i = 0; i < 6; ++i) same[i].step = i;
  s = FindSteps(Read(WatchText(same), "c.jsonl"), Read(WatchText(same), "d.jsonl"));
  EXPECT_THAT(s->notes, Not(Contains(HasSubstr("resumed"))));
  EXPECT_THAT(FindSteps(a, a)->notes, Not(Contains(HasSubstr("resumed"))));
}

TEST(StepFinderTest, AStepHashThatIsNotTheFoldOfItsLaunchDigestsIsSaidNotADifference) {
  Trace a = Read(WatchText(Job(4)), "a.jsonl");
  std::string text = WatchText(Job(4));
  const std::string good = absl::StrCat("\"hash\":\"", absl::Hex(StepHash(Job(4)[2].hashes), absl::kZeroPad16), "\"");
  ASSERT_NE(text.find(good), std::string::npos);
  text.replace(text.find(good), good.size(), "\"hash\":\"0123456789abcdef\"");
  std::optional<StepsResult> s = FindSteps(a, Read(text, "b.jsonl"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->differing, 0u);  // every launch digest is equal
  EXPECT_THAT(s->notes, Contains(HasSubstr("1 step records of B (first: step 2) have a step hash that is not the "
                                           "fold of their launch digests")));
}

TEST(StepFinderTest, AStepWrittenTwiceIsComparedOnceAndSaid) {
  auto twice = Job(4);
  twice.insert(twice.begin() + 3, StepSpec{2, {5}, {0}, std::nullopt});
  Trace a = Read(WatchText(twice), "a.jsonl"), b = Read(WatchText(Job(4)), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  EXPECT_EQ(s->compared, 4u);
  EXPECT_FALSE(s->first_differing);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_EQ(s->notes[0], "1 step numbers of A have more than one digest record (first: step 2): only the first "
                         "record of each is compared");
  s = FindSteps(b, a);  // the same on side B: no misalignment claimed
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_THAT(s->notes[0], HasSubstr("1 step numbers of B have more than one digest record"));
}

// A full watch trace holding a step in full checks itself: digests must be
// KernelDigest of the kernel records' buffer hashes.
std::string SelfCheckText(uint64_t digest_of_launch0) {
  std::string out = WatchText({}, false);
  KernelRecord k;
  k.step = 0;
  k.name = kNames[0];
  BufferRecord b;
  b.arg = 0;
  b.bytes = 8;
  b.dtype = DType::kRaw;
  b.stats.n = 8;
  b.stats.hash = 0x1234;
  k.buffers.push_back(b);
  AppendJsonLine(k, &out);
  DigestRecord d;
  d.step = 0;
  d.kernels = 1;
  d.kernel_hashes = {digest_of_launch0};
  d.hash = StepHash(d.kernel_hashes);
  d.names = {0};
  AppendJsonLine(d, &out);
  AppendJsonLine(FooterRecord{}, &out);
  return out;
}

TEST(StepFinderTest, DigestsThatDisagreeWithTheFullCaptureOfTheirStepAreSaid) {
  const uint64_t right = KernelDigest(std::vector<uint64_t>{0x1234});
  Trace good = Read(SelfCheckText(right), "good.jsonl"), bad = Read(SelfCheckText(right ^ 1), "bad.jsonl");
  EXPECT_TRUE(FindSteps(good, good)->notes.empty());
  std::optional<StepsResult> s = FindSteps(good, bad);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_EQ(s->notes[0], "1 of 1 launches of B captured in full have digests that disagree with their kernel "
                         "records' buffer hashes: the digests of that trace are suspect");
}

TEST(StepFinderTest, APlainTraceAgainstAWatchTraceSaysWhichSideHasNoDigests) {
  std::string plain;
  TraceHeader h;
  AppendJsonLine(h, &plain);
  AppendJsonLine(FooterRecord{}, &plain);
  Trace a = Read(plain, "plain.jsonl"), b = Read(WatchText(Job(3)), "watch.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->compared, 0u);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_EQ(s->notes[0], "A (plain.jsonl) holds no digest records (not captured with --watch): no steps compared");
  EXPECT_FALSE(FindSteps(a, a).has_value());  // neither side: no steps section at all
}

TEST(StepFinderTest, ACutTraceComparesUpToTheCutAndSaysSo) {
  std::string cut = WatchText(Job(8), /*footer=*/false);
  cut.resize(cut.size() - 30);  // the last digest line cut mid-write
  Trace a = Read(WatchText(Job(8)), "a.jsonl"), b = Read(cut, "b.jsonl");
  EXPECT_TRUE(b.truncated);
  ASSERT_EQ(b.digests.size(), 7u);
  std::optional<StepsResult> s = FindSteps(a, b);
  EXPECT_EQ(s->compared, 7u);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_EQ(s->notes[0], "B (b.jsonl) was cut short: steps after 6 were not compared");
}

TEST(StepFinderTest, TheHtmlPanelsOfAWatchDiffSpeakOfItsSteps) {
  // Watch traces hold no kernel records: the NaN/Inf panel names the digests'
  // first nonfinite step, and the first-divergence card does not say "no
  // pair diverged" under a diverged verdict (hostile round 4, finding 12).
  const std::string html = WatchReportHtml(7);
  EXPECT_THAT(html, HasSubstr("run A: none"));
  EXPECT_THAT(html, HasSubstr("run B: step 7, launch 0 fill_kernel (by digest)"));
  EXPECT_THAT(html, Not(HasSubstr("No pair diverged")));
  EXPECT_THAT(html, HasSubstr("No kernel records compared: the steps were compared by digest"));
}

TEST(StepFinderTest, NonfiniteStepsOfEachSide) {
  auto b_steps = Job(6);
  b_steps[4].nonfinite = 1;
  b_steps[4].hashes[1] = 9;
  Trace a = Read(WatchText(Job(6)), "a.jsonl"), b = Read(WatchText(b_steps), "b.jsonl");
  std::optional<StepsResult> s = FindSteps(a, b);
  EXPECT_FALSE(s->nonfinite_a);
  ASSERT_TRUE(s->nonfinite_b);
  EXPECT_EQ(s->nonfinite_b->step, 4);
  EXPECT_EQ(s->nonfinite_b->index, 1u);
  EXPECT_EQ(b.strings.View(s->nonfinite_b->name), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(s->strip[4], StepState::kNonfinite);
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "w.jsonl", FindImporter("numtrace"));
  if (t.ok()) return "OK";
  return std::string(t.status().message());
}

TEST(StepFinderTest, MalformedDigestRecordsAreOneLineNamingTheField) {
  const std::string head = WatchText({}, false);
  EXPECT_EQ(ErrorOf(head + R"({"type":"digest","step":0,"kernels":1,"hash":"0000000000000001","nonfinite":null,"kernel_hashes":["0000000000000001"],"names":[9]})" "\n"),
            "w.jsonl:5: digest names[]: kernel_name id 9 is not defined before its use");
  EXPECT_EQ(ErrorOf(head + R"({"type":"digest","step":0,"kernels":2,"hash":"0000000000000001","nonfinite":null,"kernel_hashes":["0000000000000001"],"names":[0]})" "\n"),
            "w.jsonl:5: digest kernels: 2 but 1 kernel_hashes");
  EXPECT_EQ(ErrorOf(head + R"({"type":"digest","step":0,"kernels":1,"hash":"xyz","nonfinite":null,"kernel_hashes":["0000000000000001"],"names":[0]})" "\n"),
            "w.jsonl:5: digest hash: expected 16 hex digits, got \"xyz\"");
  EXPECT_EQ(ErrorOf(head + R"({"type":"digest","step":0,"kernels":1,"hash":"0000000000000001","nonfinite":3,"kernel_hashes":["0000000000000001"],"names":["inline_name"]})" "\n"),
            "w.jsonl:5: digest nonfinite: 3 is not a launch of a step of 1");
  EXPECT_EQ(ErrorOf(head + R"({"type":"digest","step":0,"kernels":1,"hash":"0000000000000001","nonfinite":null,"kernel_hashes":["0000000000000001"],"names":["inline_name"]})" "\n"),
            "OK");  // a name given inline instead of an id
  EXPECT_EQ(ErrorOf(head + R"({"type":"kernel_name","name":"k"})" "\n"), "w.jsonl:5: kernel_name.id: missing");
  // A negative step (no capture command can name it) and an id given two
  // names (which one a digest meant is unknown) (hostile round 4, finding 12).
  EXPECT_EQ(ErrorOf(head + R"({"type":"digest","step":-7,"kernels":1,"hash":"0000000000000001","nonfinite":null,"kernel_hashes":["0000000000000001"],"names":[0]})" "\n"),
            "w.jsonl:5: digest step: -7 is negative (steps are numbered from 0)");
  EXPECT_EQ(ErrorOf(head + R"({"type":"kernel_name","id":1,"name":"other_kernel"})" "\n"),
            "w.jsonl:5: kernel_name.id: 1 is already the name of ampere_sgemm_128x64_nn");
  EXPECT_EQ(ErrorOf(head + R"({"type":"kernel_name","id":1,"name":"ampere_sgemm_128x64_nn"})" "\n"), "OK");
}

}  // namespace
}  // namespace numtrace::analyzer
