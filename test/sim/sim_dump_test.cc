// The element-level loop on the simulated device, in process: capture A and
// B (B with three elements of layer 2's forward GEMM output moved 2^20 ULPs),
// diff the traces, re-run both sides with the dump the first-divergence
// card asks for, and compare the dumps element by element: the planted
// elements, and only they, are named, with their values and ULP distance.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/report/dump_commands.h"
#include "analyzer/tensors/dump_reader.h"
#include "analyzer/tensors/tensor_diff.h"
#include "test/sim/sim_test_util.h"

namespace numtrace::sim {
namespace {

using analyzer::DumpSide;
using analyzer::Trace;

constexpr int kPlantedUlps = 1 << 20;

uint32_t Bits(double v) {
  const float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The NUMTRACE_* settings a printed `scripts/numtrace run` command sets.
Env DumpEnvFromCommand(const std::string& cmd, Env env) {
  auto value = [&](const std::string& flag) {
    size_t at = cmd.find(" " + flag + " ");
    EXPECT_NE(at, std::string::npos) << flag << " in " << cmd;
    if (at == std::string::npos) return std::string();
    at += flag.size() + 2;
    return cmd.substr(at, cmd.find(' ', at) - at);
  };
  env["NUMTRACE_STEPS"] = value("--steps");
  env["NUMTRACE_DUMP"] = value("--dump");
  env["NUMTRACE_DUMP_EXPECT"] = value("--dump-expect");
  return env;
}

class SimDumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ref.steps = 3;
    changed = ref;
    changed.perturb_layer = 2;
    changed.perturb_step = 1;
    changed.perturb_ulps = kPlantedUlps;
  }
  MlpOptions ref, changed;
  Env env{{"NUMTRACE_STEPS", "1"}};
};

TEST_F(SimDumpTest, PrintedDumpCommandsLeadToThePlantedElements) {
  Trace a = ReadRun(RunWithEnv(ref, env, FreshDir("a")));
  Trace b = ReadRun(RunWithEnv(changed, env, FreshDir("b")));
  analyzer::DiffResult r = analyzer::Judge(a, b, analyzer::Align(a, b));
  ASSERT_TRUE(r.first_divergence.has_value());
  const auto& pair = r.alignment.pairs[*r.first_divergence];
  const analyzer::Kernel& ka = a.kernels[pair.a];
  const analyzer::Kernel& kb = b.kernels[pair.b];
  ASSERT_EQ(a.Name(ka), kForwardGemmName);
  const analyzer::DumpCommands cmds = analyzer::BuildDumpCommands(a, ka, b, kb);
  EXPECT_NE(cmds.capture_a.find("--dump seq:" + std::to_string(ka.seq) + " "), std::string::npos) << cmds.capture_a;

  // Re-run each side as its command says (the in-process runs record the test
  // binary as argv, so the settings are taken from the command, not argv).
  const std::string dir_a = FreshDir("a.dump"), dir_b = FreshDir("b.dump");
  SimRun ra = RunWithEnv(ref, DumpEnvFromCommand(cmds.capture_a, env), dir_a);
  SimRun rb = RunWithEnv(changed, DumpEnvFromCommand(cmds.capture_b, env), dir_b);
  Trace a2 = ReadRun(ra), b2 = ReadRun(rb);
  EXPECT_TRUE(a2.notes.empty()) << a2.notes[0].msg;  // the launch is the one the trace named
  EXPECT_TRUE(b2.notes.empty()) << b2.notes[0].msg;

  absl::StatusOr<DumpSide> sa = analyzer::ReadDumpSide(dir_a, std::nullopt);
  absl::StatusOr<DumpSide> sb = analyzer::ReadDumpSide(dir_b, std::nullopt);
  ASSERT_TRUE(sa.ok()) << sa.status();
  ASSERT_TRUE(sb.ok()) << sb.status();
  EXPECT_TRUE(sa->warnings.empty());  // the bytes hash to what the trace measured
  EXPECT_EQ(sa->seq, ka.seq);
  EXPECT_EQ(sa->name, kForwardGemmName);
  // The dump's hashes are the original trace's: the same launch, the same bytes.
  for (const analyzer::DumpArray& x : sa->arrays) {
    if (x.when != "after") continue;
    bool found = false;
    for (const analyzer::Buffer& buf : a.BuffersOf(ka)) found |= buf.stats.hash == x.hash;
    EXPECT_TRUE(found) << x.file;
  }

  analyzer::TensorDiff d = analyzer::DiffDumps(*sa, *sb, {1e-5, 0});
  EXPECT_EQ(d.verdict, Verdict::kDiverged);
  int diverged_pairs = 0;
  for (const analyzer::TensorPair& p : d.pairs) {
    if (p.cmp.identical()) continue;
    ++diverged_pairs;
    EXPECT_EQ(p.when, "after");  // the inputs were equal: this launch is the origin
    EXPECT_EQ(p.role, Role::kOut);
    const analyzer::BufferComparison& c = p.cmp;
    EXPECT_EQ(c.mismatched, 3u);
    EXPECT_EQ(c.equal, c.n - 3);
    ASSERT_TRUE(c.first_mismatch);
    EXPECT_EQ(c.first_mismatch->index, static_cast<uint64_t>(kPerturbedElements[0]));
    EXPECT_EQ(Bits(c.first_mismatch->b), Bits(c.first_mismatch->a) + kPlantedUlps);
    EXPECT_EQ(c.ulp[0], c.n - 3);
    EXPECT_EQ(c.ulp[5], 3u);  // ">255"
    EXPECT_EQ(c.max_ulp, static_cast<uint64_t>(kPlantedUlps));
    // Where the mismatches lie: exactly the planted elements' bins.
    uint64_t in_strip = 0;
    for (int e : kPerturbedElements) EXPECT_GE(c.strip[e * analyzer::kStripBins / c.n], 1u) << e;
    for (uint64_t v : c.strip) in_strip += v;
    EXPECT_EQ(in_strip, 3u);
    ASSERT_TRUE(c.max_abs);
    EXPECT_TRUE(c.max_abs->index == 5 || c.max_abs->index == 17 || c.max_abs->index == 300);
  }
  EXPECT_EQ(diverged_pairs, 1);
}

TEST_F(SimDumpTest, DumpOfALaunchOtherThanTheTraceNamedSaysSo) {
  Env e = env;
  e["NUMTRACE_DUMP"] = "seq:3";
  e["NUMTRACE_DUMP_EXPECT"] = std::string(kForwardGemmName) + "@1,2,3";  // other buffer sizes
  Trace t = ReadRun(RunWithEnv(ref, e, FreshDir("a")));
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_NE(t.notes[0].msg.find("tensor dump of seq 3 is not the launch the trace named"), std::string::npos)
      << t.notes[0].msg;
}

TEST_F(SimDumpTest, RegexDumpsAreBoundedByTheByteBudget) {
  Env e = env;
  e["NUMTRACE_DUMP"] = "regex:sgemm";
  e["NUMTRACE_DUMP_MAX_BYTES"] = "64k";
  const std::string dir = FreshDir("a");
  Trace t = ReadRun(RunWithEnv(ref, e, dir));
  int sidecars = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    sidecars += f.path().extension() == ".json";
  }
  int skipped = 0;
  for (const NoteRecord& n : t.notes) skipped += n.msg.find("NUMTRACE_DUMP_MAX_BYTES=65536") != std::string::npos;
  EXPECT_GE(sidecars, 1);
  EXPECT_GE(skipped, 1);
  int gemms = 0;
  for (const analyzer::Kernel& k : t.kernels) gemms += t.Name(k).find("sgemm") != std::string_view::npos;
  EXPECT_EQ(sidecars + skipped, gemms);
}

TEST_F(SimDumpTest, DumpingChangesNeitherResultsNorTrace) {
  Env e = env;
  e["NUMTRACE_DUMP"] = "regex:.";
  SimRun plain = RunWithEnv(ref, env, FreshDir("plain"));
  SimRun dumped = RunWithEnv(ref, e, FreshDir("dumped"));
  EXPECT_EQ(plain.result.losses, dumped.result.losses);
  EXPECT_EQ(plain.result.weights, dumped.result.weights);
  Trace tp = ReadRun(plain), td = ReadRun(dumped);
  ASSERT_EQ(tp.buffers.size(), td.buffers.size());
  for (size_t i = 0; i < tp.buffers.size(); ++i) EXPECT_EQ(tp.buffers[i].stats.hash, td.buffers[i].stats.hash);
  EXPECT_TRUE(td.notes.empty());
}

}  // namespace
}  // namespace numtrace::sim
