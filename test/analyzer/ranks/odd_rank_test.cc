// The odd rank out (analyzer/ranks/odd_rank.h) on hand-written watch traces:
// the vote per launch, what is not an outlier, host and GPU, the streaming
// window, and "nothing was compared" never being a clean bill.
#include "analyzer/ranks/odd_rank.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analyzer/read/digest_stream.h"
#include "analyzer/report/cross_rank_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/analyzer/report/chromium.h"
#include "test/util/scratch_dir.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using numtrace::testing::WriteFileText;

std::string Hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// A watch trace of `rank`: digest(step, i) gives launch i's digest in that
// step; names are "fwd" for even launches and "upd" for odd ones.
struct WatchTrace {
  int64_t rank = 0;
  int steps = 3, launches = 4;
  std::function<uint64_t(int, int)> digest;
  std::string environment = "";  // an environment record's values (JSON object body)
  bool footer = true;
  std::vector<int> skip_steps;
};

std::string Text(const WatchTrace& w) {
  std::string t = R"({"type":"header","format":"numtrace-trace","version":1,"run":{"label":"x","rank":)" +
                  std::to_string(w.rank) + R"(,"world_size":4,"host":"node)" + std::to_string(w.rank / 2) +
                  R"("},"capture":{"steps":[],"outputs":"changed","watch":"full"}})" "\n";
  t += R"({"type":"kernel_name","id":0,"name":"fwd"})" "\n";
  t += R"({"type":"kernel_name","id":1,"name":"upd"})" "\n";
  for (int s = 0; s < w.steps; ++s) {
    if (std::find(w.skip_steps.begin(), w.skip_steps.end(), s) != w.skip_steps.end()) continue;
    std::string hashes, names;
    for (int i = 0; i < w.launches; ++i) {
      hashes += (i ? ",\"" : "\"") + Hex(w.digest(s, i)) + "\"";
      names += (i ? "," : "") + std::to_string(i % 2);
    }
    t += R"({"type":"digest","step":)" + std::to_string(s) + R"(,"kernels":)" + std::to_string(w.launches) +
         R"(,"hash":"0000000000000001","nonfinite":null,"kernel_hashes":[)" + hashes + R"(],"names":[)" + names +
         "]}\n";
    // A full capture of a step in between: skipped, not a problem.
    if (s == 0) t += R"({"type":"kernel","seq":0,"name":"fwd","buffers":[]})" "\n";
  }
  if (!w.environment.empty()) t += R"({"type":"environment","values":{)" + w.environment + "}}\n";
  if (w.footer) t += R"({"type":"footer","kernels":1,"launches":1,"dropped":0,"status":"complete"})" "\n";
  return t;
}

// Even launches read each rank's own data; odd ones run after the all-reduce.
uint64_t Healthy(int64_t rank, int step, int i) {
  return i % 2 == 0 ? 1000 * (rank + 1) + 10 * step + i + 1 : 7 * step + i + 1;
}

std::vector<std::string> Write(const fs::path& dir, const std::vector<WatchTrace>& ranks) {
  fs::create_directories(dir);
  std::vector<std::string> paths;
  for (const WatchTrace& w : ranks) {
    paths.push_back((dir / ("rank_" + std::to_string(w.rank) + ".ntrace.jsonl")).string());
    WriteFileText(paths.back(), Text(w));
  }
  return paths;
}

std::vector<WatchTrace> HealthyRanks(int n) {
  std::vector<WatchTrace> v;
  for (int r = 0; r < n; ++r) {
    WatchTrace w;
    w.rank = r;
    w.digest = [r](int s, int i) { return Healthy(r, s, i); };
    v.push_back(w);
  }
  return v;
}

TEST(OddRank, HealthyReplicasAgreeAndTheirOwnDataIsNoOutlier) {
  auto paths = Write(numtrace::testing::FreshTestDir("odd"), HealthyRanks(4));
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps_compared, 3u);
  EXPECT_EQ(r->launches_agreeing, 6u);
  EXPECT_EQ(r->launches_own_data, 6u);
  EXPECT_EQ(r->odd_total, 0u);
  EXPECT_TRUE(r->odd.empty());
  EXPECT_EQ(OddRankVerdict(*r), "consistent");
  EXPECT_TRUE(r->notes.empty());
}

TEST(OddRank, OneRankDepartingFromTheMajorityIsNamedWithStepLaunchHostAndGpu) {
  auto ranks = HealthyRanks(4);
  ranks[2].digest = [](int s, int i) { return s == 1 && i == 3 ? 99 : Healthy(2, s, i); };
  ranks[2].environment = R"("gpu.uuid":"GPU-2222")";
  auto paths = Write(numtrace::testing::FreshTestDir("odd"), ranks);
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 3);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->odd.size(), 1u);
  const OddRankOut& o = r->odd[0];
  EXPECT_EQ(o.rank, 2);
  EXPECT_EQ(o.step, 1);
  EXPECT_EQ(o.index, 3u);
  EXPECT_EQ(o.name, "upd");
  EXPECT_EQ(o.majority, 3u);
  EXPECT_EQ(o.ranks, 4u);
  EXPECT_EQ(o.host, "node1");
  EXPECT_EQ(o.gpu, "GPU-2222");  // from an environment record after the digests
  EXPECT_EQ(r->ranks[2].first_odd_step, 1);
  const std::string json = OddRankJson(*r, "run");
  EXPECT_THAT(json, HasSubstr(R"("odd_rank_out":[{"rank":2,"step":1,"index":3,"name":"upd","majority":3,"ranks":4,"host":"node1","gpu":"GPU-2222"}])"));
  EXPECT_THAT(json, HasSubstr(R"("odd_rank_out_total":1)"));
  EXPECT_THAT(OddRankTerminal(*r, "run", 10),
              HasSubstr("odd rank out: rank 2 (host node1, GPU GPU-2222) at step 1, launch 3 upd: 3 of 4 ranks agree"));
  const std::string html = OddRankHtml(*r, "run");
  EXPECT_THAT(html, HasSubstr("<canvas id=\"strip\">"));
  // The page's colour and word: the verdict's, coloured as a diverged diff.
  EXPECT_THAT(html, HasSubstr(R"(<span id="verdict" class="badge v-diverged">replicas differ</span>)"));
  EXPECT_THAT(html, HasSubstr(R"("odd_rank_out":[{"rank":2,"step":1)"));
  // In a browser: the departure in the table, the strip drawn to size (4 ranks x 3 steps).
  if (!numtrace::analyzer::testing::Chromium().empty()) {
    const std::string dom = numtrace::analyzer::testing::DumpDom(html, "odd_rank_page.html");
    EXPECT_THAT(dom, HasSubstr(R"(<html lang="en" data-ready="1">)")) << dom.substr(0, 2000);
    EXPECT_THAT(dom, HasSubstr("<td>2</td><td>1</td><td>3</td><td>upd</td><td>3/4</td><td>node1</td><td>GPU-2222</td>"));
    EXPECT_THAT(dom, HasSubstr(R"(<canvas id="strip" width="798" height="48">)"));
  }
  // No GPU known: the field is absent, not empty.
  EXPECT_THAT(json, HasSubstr(R"({"rank":0,"path":)"));
  EXPECT_EQ(json.find(R"("gpu":"")"), std::string::npos);
}

TEST(OddRank, NoStrictMajorityIsNoOutlierAndALostDigestHasNoVote) {
  auto ranks = HealthyRanks(4);
  // Launch 1 of step 0: two against two - no majority.
  ranks[0].digest = [](int s, int i) { return s == 0 && i == 1 ? 50 : Healthy(0, s, i); };
  ranks[1].digest = [](int s, int i) { return s == 0 && i == 1 ? 50 : Healthy(1, s, i); };
  // Launch 3 of step 2: rank 3 could not digest it (0): the other three agree.
  ranks[3].digest = [](int s, int i) { return s == 2 && i == 3 ? 0 : Healthy(3, s, i); };
  auto paths = Write(numtrace::testing::FreshTestDir("odd"), ranks);
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->odd_total, 0u);
  EXPECT_EQ(r->launches_own_data, 7u);
}

TEST(OddRank, AMissingStepSitsOutAndACutTraceIsSaid) {
  auto ranks = HealthyRanks(3);
  ranks[1].skip_steps = {1};
  ranks[2].footer = false;
  auto paths = Write(numtrace::testing::FreshTestDir("odd"), ranks);
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps_compared, 3u);
  EXPECT_EQ(r->odd_total, 0u);
  EXPECT_EQ(r->ranks[1].steps, 2u);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_THAT(r->notes[0], HasSubstr("rank 2"));
  EXPECT_THAT(r->notes[0], HasSubstr("cut short"));
}

TEST(OddRank, ManyStepsStreamThroughTheWindowAndTheLateDepartureIsFound) {
  // More launches than one window holds, so the window is refilled.
  auto ranks = HealthyRanks(3);
  const int steps = static_cast<int>(kWindowLaunches / 40) + 5;
  for (WatchTrace& w : ranks) {
    w.steps = steps;
    w.launches = 40;
  }
  ranks[0].digest = [steps](int s, int i) { return s == steps - 2 && i == 5 ? 1 : Healthy(0, s, i); };
  auto paths = Write(numtrace::testing::FreshTestDir("odd"), ranks);
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps_compared, static_cast<uint64_t>(steps));
  ASSERT_EQ(r->odd.size(), 1u);
  EXPECT_EQ(r->odd[0].rank, 0);
  EXPECT_EQ(r->odd[0].step, steps - 2);
  EXPECT_EQ(r->odd[0].index, 5u);
}

TEST(OddRank, ARankWithoutDigestsIsNothingComparedNotAgreement) {
  const fs::path dir = numtrace::testing::FreshTestDir("odd");
  auto ranks = HealthyRanks(2);
  ranks[1].steps = 0;
  auto paths = Write(dir, ranks);
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nothing was compared: "));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("rank_1.ntrace.jsonl holds no digest records"));
  // A broken line names the file and the line.
  WriteFileText(paths[1], Text(HealthyRanks(2)[1]) + "{\"type\":\"digest\",\"step\":9}\n");
  r = FindOddRankOut(paths, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("rank_1.ntrace.jsonl:"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("kernels"));
}

// The odd rank out reads a trace with the trace reader's own record
// dispatch (read/trace_reader.h), so it refuses what numtrace-diff refuses:
// a second header is an error naming the file and line, not ignored.
TEST(OddRank, RecordsAreCheckedAsTheTraceReaderChecksThem) {
  auto ranks = HealthyRanks(2);
  auto paths = Write(numtrace::testing::FreshTestDir("odd"), ranks);
  const std::string text = Text(ranks[1]);
  WriteFileText(paths[1], text + text.substr(0, text.find('\n') + 1));
  absl::StatusOr<OddRankResult> r = FindOddRankOut(paths, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("rank_1.ntrace.jsonl:"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("a second header"));
}

TEST(OddRank, IsWatchTraceReadsTheHeaderOnly) {
  const fs::path dir = numtrace::testing::FreshTestDir("odd");
  auto paths = Write(dir, HealthyRanks(1));
  absl::StatusOr<bool> w = IsWatchTrace(paths[0]);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(*w);
  WriteFileText(dir / "plain.jsonl", R"({"type":"header","format":"numtrace-trace","version":1})" "\n");
  w = IsWatchTrace((dir / "plain.jsonl").string());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(*w);
  // A torchtitan DebugMode log: not a watch trace (the kernel-record check takes it).
  WriteFileText(dir / "rank_0_activations.log", "Total captured activations: 0\n");
  w = IsWatchTrace((dir / "rank_0_activations.log").string());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(*w);
}

}  // namespace
}  // namespace numtrace::analyzer
