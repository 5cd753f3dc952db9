// The first-divergence card's follow-up commands: a re-capture per side with
// the dump of that launch, reproducing how the trace selected its launches,
// and the --tensors diff of the two dumps.
#include "analyzer/report/dump_commands.h"

#include <gtest/gtest.h>


namespace numtrace::analyzer {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

Trace TraceWith(std::string path, std::vector<std::string> argv, Settings settings, std::vector<int64_t> steps,
                std::string label) {
  Trace t;
  t.path = std::move(path);
  RunInfo run;
  run.argv = std::move(argv);
  run.label = std::move(label);
  t.header.run = run;
  CaptureInfo cap;
  cap.steps = std::move(steps);
  cap.outputs = "changed";
  // The prose is for people: the commands never read it.
  cap.selector = "mode=kernel:misleading steps=7 kernel=prose";
  cap.settings = std::move(settings);
  t.header.capture = cap;
  t.kernels.push_back({});
  t.kernels[0].seq = 41;
  t.kernels[0].name = t.strings.Intern("_Z4gemmPfS_");
  t.kernels[0].demangled = t.kernels[0].name;
  t.kernels[0].first_buffer = 0;
  t.kernels[0].buffer_count = 2;
  t.buffers.resize(2);
  t.buffers[0].bytes = 4096;
  t.buffers[1].bytes = 2560;
  return t;
}

TEST(DumpCommandsTest, ReproducesTheCaptureWithTheDumpOfThatLaunch) {
  Trace a = TraceWith("runs/a/rank_0.ntrace.jsonl", {"python", "train.py", "--lr", "1e-3"}, {}, {2}, "eager");
  Trace b = TraceWith("runs/b/rank_0.ntrace.jsonl", {"python", "train.py", "--compile", "it's"},
                      {{"NUMTRACE_STEP_MODE", "nvtx:train step"},
                       {"NUMTRACE_KERNEL", "gemm;regex:^add"},
                       {"NUMTRACE_KERNEL_EXCLUDE", "nccl"},
                       {"NUMTRACE_LABEL", "not a recapture setting"},
                       {"NUMTRACE_UNKNOWN_TO_THIS_VERSION", "x"}},
                      {}, "");
  b.kernels[0].seq = 42;
  DumpCommands c = BuildDumpCommands(a, a.kernels[0], b, b.kernels[0]);
  EXPECT_EQ(c.capture_a,
            "numtrace run -o runs/a-dump-seq41 --steps 2 --label eager --dump seq:41 "
            "--dump-expect _Z4gemmPfS_@4096,2560 -- python train.py --lr 1e-3");
  EXPECT_EQ(c.capture_b,
            "numtrace run -o runs/b-dump-seq42 --steps all --step-mark 'nvtx:train step' "
            "--kernel-name 'gemm;regex:^add' --kernel-name-exclude nccl --dump seq:42 "
            "--dump-expect _Z4gemmPfS_@4096,2560 -- python train.py --compile 'it'\\''s'");
  EXPECT_EQ(c.tensors,
            "numtrace diff --tensors runs/a-dump-seq41/dump_0_41.json runs/b-dump-seq42/dump_0_42.json");
}

TEST(DumpCommandsTest, TraceInTheCurrentDirectoryAndWithoutArgv) {
  Trace a = TraceWith("rank_0.ntrace.jsonl", {},
                      {{"NUMTRACE_STEPS", "1,3-4"}, {"NUMTRACE_MIN_BYTES", "4k"}, {"NUMTRACE_OUTPUTS", "all"},
                       {"NUMTRACE_LAUNCH_SKIP", "5"}, {"NUMTRACE_LAUNCH_COUNT", "10"}},
                      {1, 3, 4}, "");
  DumpCommands c = BuildDumpCommands(a, a.kernels[0], a, a.kernels[0]);
  EXPECT_EQ(c.capture_a,
            "numtrace run -o numtrace-dump-seq41 --steps 1,3-4 --min-bytes 4k --outputs all --launch-skip 5 "
            "--launch-count 10 --dump seq:41 --dump-expect _Z4gemmPfS_@4096,2560 -- YOUR_COMMAND");
}

TEST(DumpCommandsTest, ShellQuoting) {
  EXPECT_EQ(ShellQuote("plain-1.0/x:y,z@w"), "plain-1.0/x:y,z@w");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

TEST(DumpCommandsTest, ShellQuotingKeepsExactBytesAndStaysInert) {
  // A newline, TAB, ESC, byte 0xFF or a U+202E pasted from a printed line
  // must be those bytes again, and the printed word must be inert.
  EXPECT_EQ(ShellQuote("line1\nline2\tTab"), "$'line1\\x0aline2\\x09Tab'");
  EXPECT_EQ(ShellQuote("k\x1b[2J"), "$'k\\x1b[2J'");
  EXPECT_EQ(ShellQuote("\xff\xfe end"), "$'\\xff\\xfe end'");
  EXPECT_EQ(ShellQuote("it's \\\x01"), "$'it\\'s \\\\\\x01'");
  EXPECT_EQ(ShellQuote("rtl\u202Eevil"), "$'rtl\\xe2\\x80\\xaeevil'");
  EXPECT_EQ(ShellQuote("caf\u00e9 x"), "'caf\u00e9 x'");  // printable UTF-8: plain quotes
  EXPECT_EQ(ShellQuote("=cmd"), "'=cmd'");                 // zsh's EQUALS
}

TEST(DumpCommandsTest, StepCaptureTakesTheWholeStepIntoOneDirectoryPerSide) {
  const Settings narrow = {{"NUMTRACE_STEPS", "none"},
                           {"NUMTRACE_LAUNCH_COUNT", "2"},
                           {"NUMTRACE_KERNEL", "softmax"},
                           {"NUMTRACE_MIN_BYTES", "4k"}};
  Trace a = TraceWith("ddp/rank_0.ntrace.jsonl", {"sim", "--steps", "10"}, narrow, {}, "");
  Trace b = TraceWith("ddp/rank_1.ntrace.jsonl", {"sim", "--perturb", "2"}, narrow, {}, "");
  b.header.run->rank = 1;
  StepCapture c = BuildStepCapture(a, b, 6);
  // The digests covered every launch: the launch window and kernel filters go, said once.
  EXPECT_EQ(c.command_a, "numtrace run -o ddp-step6-a --steps 6 --min-bytes 4k -- sim --steps 10");
  EXPECT_EQ(c.command_b, "numtrace run -o ddp-step6-b --steps 6 --min-bytes 4k -- sim --perturb 2");
  EXPECT_EQ(c.left_out_a, "--launch-count 2 --kernel-name softmax");
  EXPECT_EQ(c.diff, "numtrace diff ddp-step6-a ddp-step6-b");
  EXPECT_TRUE(c.worker);

  Trace x = TraceWith("runs/x/rank_0.ntrace.jsonl", {"t"}, {}, {}, "");
  Trace y = TraceWith("runs/y/rank_0.ntrace.jsonl", {"t"}, {}, {}, "");
  StepCapture d = BuildStepCapture(x, y, 3);
  EXPECT_EQ(d.dir_a, "runs/x-step3");
  EXPECT_EQ(d.dir_b, "runs/y-step3");
  EXPECT_TRUE(d.left_out_a.empty());
  EXPECT_FALSE(d.worker);

  // Read through pipes (<(zcat a.gz)): never a directory in /dev; a leading dash is no option.
  Trace p = TraceWith("/dev/fd/63", {"t"}, {}, {}, "");
  Trace q = TraceWith("-dash/rank_0.ntrace.jsonl", {"t"}, {}, {}, "");
  StepCapture e = BuildStepCapture(p, q, 1);
  EXPECT_EQ(e.dir_a, "numtrace-step1");
  EXPECT_EQ(e.dir_b, "./-dash-step1");
}

// Under a launcher the worker's argv re-runs one rank without its launcher
// and rank environment; numtrace run records the command it started
// (job.command), and the printed commands run that: the whole job again.
TEST(DumpCommandsTest, TheJobsOwnCommandReplacesTheWorkersArgv) {
  Trace a = TraceWith("ddp/rank_1.ntrace.jsonl", {"/usr/bin/python3", "train.py", "--lr", "0.1"}, {}, {2}, "");
  Trace b = TraceWith("ddp2/rank_1.ntrace.jsonl", {"/usr/bin/python3", "train.py"}, {}, {2}, "");
  for (Trace* t : {&a, &b}) {
    t->header.run->rank = 1;
    t->header.run->world_size = 2;
  }
  a.header.environment = {{"job.cwd", "/w"}, {"job.command", "torchrun --nproc-per-node 2 train.py --lr 0.1"}};
  StepCapture c = BuildStepCapture(a, a, 4);
  EXPECT_EQ(c.command_a, "numtrace run -o ddp-step4-a --steps 4 -- torchrun --nproc-per-node 2 train.py --lr 0.1");
  EXPECT_FALSE(c.worker) << "the launcher's command, with every rank";
  EXPECT_EQ(c.diff, "numtrace diff ddp-step4-a ddp-step4-b") << "the same rank on both sides: the directories";
  // Two ranks of one run against each other: the re-captures hold every
  // rank, so the diff names those two ranks' files again.
  Trace rank0 = TraceWith("ddp/rank_0.ntrace.jsonl", {"/usr/bin/python3", "train.py"}, {}, {2}, "");
  rank0.header.environment = a.header.environment;
  a.rank = 1;
  EXPECT_EQ(BuildStepCapture(rank0, a, 4).diff,
            "numtrace diff ddp-step4-a/rank_0.ntrace.jsonl ddp-step4-b/rank_1.ntrace.jsonl");
  EXPECT_TRUE(BuildStepCapture(a, b, 4).worker) << "B has only its worker's argv";
  const DumpCommands d = BuildDumpCommands(a, a.kernels[0], b, b.kernels[0]);
  EXPECT_NE(d.capture_a.find("-- torchrun --nproc-per-node 2 train.py --lr 0.1"), std::string::npos) << d.capture_a;
  EXPECT_NE(d.capture_b.find("-- /usr/bin/python3 train.py"), std::string::npos) << d.capture_b;
  // A value numtrace run could not have written (a raw control byte) is not pasted.
  a.header.environment = {{"job.command", "torchrun train.py\n; rm -rf ~"}};
  EXPECT_EQ(BuildStepCapture(a, b, 4).command_a,
            "numtrace run -o ddp-step4 --steps 4 -- /usr/bin/python3 train.py --lr 0.1");
}

}  // namespace
}  // namespace numtrace::analyzer
