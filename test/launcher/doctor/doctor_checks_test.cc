#include "launcher/doctor/doctor_checks.h"

#include <dlfcn.h>

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/doctor/doctor_command.h"
#include "launcher/doctor/system_probe.h"
#include "test/launcher/launcher_test_util.h"

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::TestContext;

constexpr const char kGencode[] =
    "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 "
    "-gencode=arch=compute_100,code=[sm_100,compute_100]";

// Canned facts: an H200 machine where everything works, changed per test.
class FakeProbe : public SystemProbe {
 public:
  LibraryFacts library{true, "0.1.0", ""};
  DriverFacts driver{true, "/usr/lib/libcuda.so.1", "", 0, 13000, {{0, "NVIDIA H200", 9, 0}}};
  CuptiFacts cupti{true, "/usr/local/cuda/lib64/libcupti.so.13", 130001, ""};
  SubscriberFacts subscriber{true, false, ""};
  PythonFacts python{true, "python3", "2.11.0+cu130", "", true, "3.6.0", true, true, ""};
  int subscriber_calls = 0;

  LibraryFacts Library(const InstallLayout&) override { return library; }
  DriverFacts Driver() override { return driver; }
  CuptiFacts Cupti(const Environment&) override { return cupti; }
  SubscriberFacts Subscriber(const InstallLayout&, const Environment&) override {
    ++subscriber_calls;
    return subscriber;
  }
  PythonFacts Python(const InstallLayout&, const Environment&) override { return python; }
};

DoctorInputs Inputs(const std::string& dir) {
  DoctorInputs in;
  in.layout = LayoutFromBinDir("/opt/nt/bin", Environment());
  in.output_dir = dir;
  in.gencode = kGencode;
  return in;
}

const CheckRow& Row(const DoctorReport& r, const std::string& name) {
  for (const CheckRow& row : r.rows) {
    if (row.name == name) return row;
  }
  static const CheckRow none = [] {
    CheckRow r;
    r.name = "<missing>";
    return r;
  }();
  ADD_FAILURE() << "no row " << name;
  return none;
}

TEST(DoctorChecks, AMissingPythonIsNamedAsTried) {
  // NUMTRACE_PYTHON named another interpreter, and the rows said "no python3"
  // (hostile round 4, finding 15).
  TempDir tmp;
  FakeProbe probe;
  probe.python = PythonFacts{};
  probe.python.interpreter = "/venv/bin/python";
  probe.python.error = "/venv/bin/python: No such file or directory";
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_EQ(Row(r, "torch").found, "no Python (/venv/bin/python): /venv/bin/python: No such file or directory");
  EXPECT_EQ(Row(r, "PyTorch hooks attach").found, "no Python (/venv/bin/python)");
}

TEST(DoctorChecks, AWorkingGpuMachineCanCapture) {
  TempDir tmp;
  FakeProbe probe;
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_TRUE(r.can_capture) << FormatDoctorReport(r);
  EXPECT_EQ(r.verdict, "numtrace can capture here.");
  EXPECT_THAT(Row(r, "CUDA driver").found, HasSubstr("supports CUDA 13.0"));
  EXPECT_THAT(Row(r, "GPU").found, HasSubstr("NVIDIA H200 (sm_90)"));
  EXPECT_EQ(Row(r, "reduction kernels").status, CheckStatus::kOk);
  EXPECT_EQ(Row(r, "CUPTI subscriber free").status, CheckStatus::kOk);
  // Review finding 13 (kineto's CuptiActivityApi.cpp): a profiler started
  // later still records kernels but takes the activity buffers.
  EXPECT_THAT(Row(r, "CUPTI subscriber free").found, HasSubstr("takes numtrace's activity records"));
  EXPECT_THAT(Row(r, "CUPTI subscriber free").found, HasSubstr("NUMTRACE_ACTIVITY=0 leaves them to the profiler"));
  EXPECT_EQ(probe.subscriber_calls, 1);
}

// Issue 18, item 4: the CUDA child's trace says most launches had no
// parameter layout (CUkernel handles the driver would not describe): a
// capture of names only - a loud failure, not a quiet trace without buffers.
TEST(DoctorChecks, MostLaunchesWithoutALayoutFailLoudly) {
  TempDir tmp;
  FakeProbe probe;
  probe.subscriber.layouts_known = true;
  probe.subscriber.launches_seen = 4;
  probe.subscriber.launches_no_layout = 0;
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_EQ(Row(r, "parameter layouts").status, CheckStatus::kOk);
  EXPECT_TRUE(r.can_capture);
  probe.subscriber.launches_no_layout = 4;
  r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_EQ(Row(r, "parameter layouts").status, CheckStatus::kFail);
  EXPECT_THAT(Row(r, "parameter layouts").found, HasSubstr("4 of 4 launches had no parameter layout"));
  EXPECT_FALSE(r.can_capture);
  probe.subscriber.layouts_known = false;  // the child's trace said nothing
  r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_EQ(Row(r, "parameter layouts").status, CheckStatus::kSkip);
  EXPECT_TRUE(r.can_capture);
}

// Issue 15: `doctor -o /dev/null` said "no existing parent directory".
TEST(DoctorChecks, AnOutputThatIsNotADirectorySaysSo) {
  FakeProbe probe;
  DoctorReport r = RunDoctorChecks(probe, Inputs("/dev/null"));
  EXPECT_EQ(Row(r, "output directory").status, CheckStatus::kFail);
  EXPECT_EQ(Row(r, "output directory").found, "/dev/null exists and is not a directory");
  EXPECT_FALSE(r.can_capture);
  r = RunDoctorChecks(probe, Inputs("/dev/null/runA"));
  EXPECT_THAT(Row(r, "output directory").found,
              HasSubstr("/dev/null exists and is not a directory (/dev/null/runA would have to be made inside it)"));
}

// Issue 15: no row for NUMTRACE_ENABLE=0 or a bad NUMTRACE_* in the environment.
TEST(DoctorChecks, SettingsInTheEnvironmentHaveARow) {
  TempDir tmp;
  FakeProbe probe;
  DoctorInputs in = Inputs(tmp.path());
  EXPECT_EQ(Row(RunDoctorChecks(probe, in), "NUMTRACE_* settings").status, CheckStatus::kOk);
  in.env.Set("NUMTRACE_STEPS", "two");
  DoctorReport bad = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(bad, "NUMTRACE_* settings").status, CheckStatus::kFail);
  EXPECT_THAT(Row(bad, "NUMTRACE_* settings").found,
              HasSubstr("NUMTRACE_STEPS (in the environment) 'two' is not valid; accepted: all, none, N"));
  EXPECT_FALSE(bad.can_capture);
  in.env.Set("NUMTRACE_ENABLE", "0");
  DoctorReport off = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(off, "NUMTRACE_* settings").status, CheckStatus::kWarn);
  EXPECT_THAT(Row(off, "NUMTRACE_* settings").found, HasSubstr("NUMTRACE_ENABLE=0 in the environment: capture is switched off"));
}

// The settings that decide whether two runs can match, as rows (never
// required: capture works either way).
TEST(DoctorChecks, RunToRunSettingsHaveRows) {
  TempDir tmp;
  FakeProbe probe;
  DoctorInputs in = Inputs(tmp.path());
  in.env.Unset("CUBLAS_WORKSPACE_CONFIG");
  in.env.Unset("NCCL_ALGO");
  in.env.Set("WORLD_SIZE", "8");
  in.env.Set("NCCL_MIN_NCHANNELS", "4");
  DoctorReport r = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(r, "CUBLAS_WORKSPACE_CONFIG").status, CheckStatus::kWarn);
  EXPECT_THAT(Row(r, "CUBLAS_WORKSPACE_CONFIG").found, HasSubstr("is unset"));
  EXPECT_EQ(Row(r, "NCCL_ALGO").status, CheckStatus::kWarn);
  EXPECT_THAT(Row(r, "settings recorded").found, HasSubstr("NCCL_MIN_NCHANNELS=4"));
  EXPECT_TRUE(r.can_capture);
  in.env.Set("CUBLAS_WORKSPACE_CONFIG", ":4096:8");
  in.env.Set("NCCL_ALGO", "Ring");
  DoctorReport pinned = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(pinned, "CUBLAS_WORKSPACE_CONFIG").status, CheckStatus::kOk);
  EXPECT_EQ(Row(pinned, "NCCL_ALGO").status, CheckStatus::kOk);
  EXPECT_THAT(Row(pinned, "NCCL_ALGO").found, HasSubstr("pinned to Ring"));
}

TEST(DoctorChecks, NoDriverSaysExactlyThatAndCannotCapture) {
  TempDir tmp;
  FakeProbe probe;
  probe.driver = DriverFacts{};
  probe.driver.error = "libcuda.so.1: cannot open shared object file";
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_FALSE(r.can_capture);
  EXPECT_EQ(r.verdict,
            "numtrace cannot capture on this machine: no CUDA driver (libcuda.so.1 not found). "
            "numtrace diff and numtrace show work here.");
  EXPECT_EQ(Row(r, "CUDA driver").status, CheckStatus::kFail);
  EXPECT_THAT(Row(r, "CUDA driver").fix, HasSubstr("NVIDIA GPU and its driver"));
  EXPECT_EQ(Row(r, "GPU").status, CheckStatus::kSkip);
  EXPECT_EQ(Row(r, "CUPTI subscriber free").status, CheckStatus::kSkip);
  EXPECT_EQ(probe.subscriber_calls, 0);  // no CUDA child without a driver
}

TEST(DoctorChecks, AHeldCuptiFailsWithTheHoldersLineAndWhatToDo) {
  TempDir tmp;
  FakeProbe probe;
  probe.subscriber = {true, true, "numtrace: CUPTI is already in use by kineto (one subscriber ...)"};
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_FALSE(r.can_capture);
  EXPECT_THAT(Row(r, "CUPTI subscriber free").found, HasSubstr("already in use by kineto"));
  EXPECT_THAT(Row(r, "CUPTI subscriber free").fix, HasSubstr("torch.profiler"));
  EXPECT_EQ(r.verdict, "numtrace cannot capture here: 1 check failed (see the table).");
}

TEST(DoctorChecks, ACudaChildThatFailsUnderTheLibraryIsAFailure) {
  TempDir tmp;
  FakeProbe probe;
  probe.subscriber = {false, false, "exit 1: numtrace __cuda-child: CUDA call failed with CUresult 2"};
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_FALSE(r.can_capture);
  EXPECT_THAT(Row(r, "CUPTI subscriber free").found, HasSubstr("CUresult 2"));
  EXPECT_THAT(Row(r, "CUPTI subscriber free").fix, HasSubstr("NUMTRACE_LOG_LEVEL=info"));
}

TEST(DoctorChecks, AnUncoveredGpuArchitectureFails) {
  TempDir tmp;
  FakeProbe probe;
  probe.driver.gpus = {{0, "Tesla T4", 7, 5}};
  DoctorReport r = RunDoctorChecks(probe, Inputs(tmp.path()));
  EXPECT_FALSE(r.can_capture);
  EXPECT_EQ(Row(r, "reduction kernels").status, CheckStatus::kFail);
  EXPECT_THAT(Row(r, "reduction kernels").found, HasSubstr("not sm_75"));
}

TEST(DoctorChecks, MissingCuptiAndUnwritableDirectoryFail) {
  FakeProbe probe;
  probe.cupti = CuptiFacts{false, "", 0, "libcupti.so.13: not found"};
  DoctorReport r = RunDoctorChecks(probe, Inputs("/proc/numtrace-cannot-write-here"));
  EXPECT_FALSE(r.can_capture);
  EXPECT_EQ(Row(r, "CUPTI").status, CheckStatus::kFail);
  EXPECT_THAT(Row(r, "CUPTI").fix, HasSubstr("NUMTRACE_CUPTI_LIB"));
  EXPECT_EQ(Row(r, "output directory").status, CheckStatus::kFail);
  EXPECT_EQ(r.verdict, "numtrace cannot capture here: 2 checks failed (see the table).");
}

TEST(DoctorChecks, TorchProblemsWarnButDoNotStopCapture) {
  TempDir tmp;
  FakeProbe probe;
  probe.python.torch_version.clear();
  probe.python.torch_error = "ModuleNotFoundError";
  DoctorInputs in = Inputs(tmp.path());
  in.env.Set("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  DoctorReport r = RunDoctorChecks(probe, in);
  EXPECT_TRUE(r.can_capture);
  EXPECT_EQ(Row(r, "torch").status, CheckStatus::kWarn);
  EXPECT_EQ(Row(r, "allocator").status, CheckStatus::kOk) << "caching mode: tensors from the allocator's trace";
  in.env.Set("NUMTRACE_ALLOCATOR", "async");
  DoctorReport async = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(async, "allocator").status, CheckStatus::kWarn) << "async cannot override the user's setting";
  EXPECT_THAT(Row(async, "allocator").found, HasSubstr("caching-allocator segments"));
  EXPECT_EQ(Row(r, "PyTorch hooks attach").status, CheckStatus::kSkip);
}

// Issue 18, item 1: doctor names the first thing to try when a job hangs.
TEST(DoctorChecks, KernelActivityRowNamesTheSwitchToTryWhenAJobHangs) {
  TempDir tmp;
  FakeProbe probe;
  DoctorInputs in = Inputs(tmp.path());
  DoctorReport r = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(r, "kernel activity check").status, CheckStatus::kOk);
  EXPECT_THAT(Row(r, "kernel activity check").found, HasSubstr("NUMTRACE_ACTIVITY=0 first"))
      << "shown on an ok row (fixes are shown for failures only)";
  in.env.Set("NUMTRACE_ACTIVITY", "off");
  r = RunDoctorChecks(probe, in);
  EXPECT_THAT(Row(r, "kernel activity check").found, HasSubstr("off (NUMTRACE_ACTIVITY=off)"));
  EXPECT_TRUE(r.can_capture);
}

TEST(ReductionKernelsCover, SassWithinAMajorAndPtxForNewerGpus) {
  std::string what;
  EXPECT_TRUE(ReductionKernelsCover(kGencode, 9, 0, &what));
  EXPECT_EQ(what, "sm_80 sm_90 sm_100 compute_100");
  EXPECT_TRUE(ReductionKernelsCover(kGencode, 8, 6, &what));    // sm_80 SASS runs on 8.6
  EXPECT_TRUE(ReductionKernelsCover(kGencode, 12, 0, &what));   // compute_100 PTX JIT
  EXPECT_FALSE(ReductionKernelsCover(kGencode, 7, 5, &what));
  EXPECT_FALSE(ReductionKernelsCover("", 9, 0, &what));
}

TEST(DoctorCommand, OnThisMachineWithoutADriverItSaysSoAndExits1) {
  if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "this machine has a CUDA driver; the no-driver answer is checked with fakes above";
  }
  TestContext t;
  t.ctx.env.Set("NUMTRACE_PYTHON", "/nonexistent/python3");
  MachineProbe probe;
  TempDir tmp;
  EXPECT_EQ(DoctorCommandMain({"doctor", "-o", tmp.path()}, t.ctx, probe), 1);
  EXPECT_THAT(t.out.str(), HasSubstr("no CUDA driver: libcuda.so.1 not found"));
  EXPECT_THAT(t.out.str(), HasSubstr("numtrace cannot capture on this machine: no CUDA driver"));
  // The library of this build loads (in a child, inert).
  EXPECT_THAT(t.out.str(), HasSubstr("libnumtrace.so loads   ok"));
}

// The CUDA child's trace is read with the trace reader, not searched for
// text: a footer with blanks after its colons (valid JSON) still gives its
// counters, and a trace cut short (no footer) or another file says nothing.
TEST(DoctorProbe, ChildLayoutsComeFromTheTracesFooter) {
  constexpr const char kHeader[] =
      R"({"type":"header","format":"numtrace-trace","version":1,"capture":{"steps":[],"outputs":"changed","selector":""}})"
      "\n";
  TempDir tmp;
  SubscriberFacts facts;
  ReadChildLayouts(tmp.path(), &facts);
  EXPECT_FALSE(facts.layouts_known) << "an empty directory";
  std::ofstream(tmp / "rank_0.pid7.ntrace.jsonl") << kHeader;  // cut short
  std::ofstream(tmp / "notes.txt") << R"({"type":"footer","counters":{"launches_seen":9}})" "\n";
  ReadChildLayouts(tmp.path(), &facts);
  EXPECT_FALSE(facts.layouts_known) << "no trace with a footer";
  std::ofstream(tmp / "rank_0.pid8.ntrace.jsonl")
      << kHeader
      << R"({"type":"footer", "kernels": 0, "launches": 4, "dropped": 0, "unmeasured": 0, )"
         R"("counters": {"launches_seen": 4, "launches_no_layout": 3}, "status": "complete"})"
         "\n";
  ReadChildLayouts(tmp.path(), &facts);
  EXPECT_TRUE(facts.layouts_known);
  EXPECT_EQ(facts.launches_seen, 4u);
  EXPECT_EQ(facts.launches_no_layout, 3u);
}

TEST(DoctorCommand, HelpShowsExamples) {
  TestContext t;
  FakeProbe probe;
  EXPECT_EQ(DoctorCommandMain({"doctor", "--help"}, t.ctx, probe), 0);
  EXPECT_THAT(t.out.str(), HasSubstr("Examples:"));
}

}  // namespace
}  // namespace numtrace::launcher

namespace numtrace::launcher {
namespace {

// Issue 18, item 7: the default allocator mode needs the tensor map's
// bridge built in the job; doctor builds it as a job would and says so.
TEST(DoctorChecks, TheTensorMapBridgeRowSaysWhetherItBuilds) {
  TempDir tmp;
  FakeProbe probe;
  DoctorInputs in = Inputs(tmp.path());
  probe.python.bridge = "ok: built against torch 2.11.0 in 1.8 s (g++)";
  EXPECT_EQ(Row(RunDoctorChecks(probe, in), "tensor map bridge").status, CheckStatus::kOk);
  EXPECT_EQ(Row(RunDoctorChecks(probe, in), "tensor map bridge").found, "built against torch 2.11.0 in 1.8 s (g++)");
  probe.python.bridge = "failed: no C++ compiler to build the allocator bridge: CXX unset and none of c++, g++, clang++ on PATH";
  DoctorReport r = RunDoctorChecks(probe, in);
  EXPECT_EQ(Row(r, "tensor map bridge").status, CheckStatus::kWarn);
  EXPECT_THAT(Row(r, "tensor map bridge").found, HasSubstr("no C++ compiler"));
  EXPECT_THAT(Row(r, "tensor map bridge").fix, HasSubstr("--allocator async"));
  EXPECT_TRUE(r.can_capture) << "a warning: capture works, buffers are segments";
  in.env.Set("NUMTRACE_ALLOCATOR", "async");
  DoctorReport async = RunDoctorChecks(probe, in);
  EXPECT_TRUE(std::none_of(async.rows.begin(), async.rows.end(),
                           [](const CheckRow& row) { return row.name == "tensor map bridge"; }))
      << "async needs no bridge";
}

}  // namespace
}  // namespace numtrace::launcher
