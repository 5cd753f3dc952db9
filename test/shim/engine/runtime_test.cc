#include "shim/engine/runtime.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "shim/device/host_device.h"
#include "shim/writer/trace_writer.h"
#include "test/shim/engine/engine_test_util.h"

namespace numtrace::shim {
namespace {

using testing::LaunchBuilder;
using testing::MapEnv;

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("numtrace_rt_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(RuntimeTest, BadValueLeavesItInertWithOneLine) {
  Runtime rt(MapEnv({{"NUMTRACE_STEPS", "soon"}}));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(rt.Configure());
  EXPECT_FALSE(rt.Configure());  // read once: no second message
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("NUMTRACE_STEPS='soon'"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  EXPECT_EQ(rt.Start(std::make_unique<HostDevice>(), std::nullopt), nullptr);
  EXPECT_EQ(rt.sink(), nullptr);
}

TEST(RuntimeTest, StrictBadValueExitsNonZero) {
  EXPECT_EXIT(
      {
        Runtime rt(MapEnv({{"NUMTRACE_STRICT", "1"}, {"NUMTRACE_OUTPUTS", "most"}}));
        rt.Configure();
      },
      ::testing::ExitedWithCode(2), "NUMTRACE_OUTPUTS='most'");
}

TEST(RuntimeTest, DisabledIsSilentlyInert) {
  Runtime rt(MapEnv({{"NUMTRACE_ENABLE", "0"}}));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(rt.Configure());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// Issue 24: numtrace run's "the job never started CUDA" line counts these
// marks; one per process, only once CUDA started, nothing else written.
TEST(RuntimeTest, CudaStartLeavesOneMarkNamedByThePidInTheRunState) {
  const std::string state = TempDir("state");
  const std::string out = TempDir("state_out");
  std::filesystem::create_directories(state);
  Runtime rt(MapEnv({{"NUMTRACE_RUN_STATE", state}, {"NUMTRACE_OUTPUT_DIR", out}}));
  ASSERT_TRUE(rt.Configure());
  EXPECT_TRUE(std::filesystem::is_empty(state));  // configured is not started
  EXPECT_FALSE(rt.cuda_started());
  rt.NoteCudaStarted();
  rt.NoteCudaStarted();
  EXPECT_TRUE(rt.cuda_started());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(state)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{std::to_string(getpid())});
  EXPECT_FALSE(std::filesystem::exists(out));  // no trace, no output directory
  // Without the setting (a job not started by numtrace run): nothing at all.
  Runtime plain(MapEnv({{"NUMTRACE_OUTPUT_DIR", out}}));
  plain.NoteCudaStarted();
  EXPECT_TRUE(plain.cuda_started());
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(state);
}

TEST(RuntimeTest, StartCaptureShutdownWritesACompleteTrace) {
  const std::string dir = TempDir("full");
  Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "0"},
                     {"NUMTRACE_LABEL", "A"}, {"RANK", "3"}, {"WORLD_SIZE", "8"}}));
  ASSERT_TRUE(rt.Configure());
  // Early annotation, before CUDA is up.
  ASSERT_TRUE(rt.Annotate("scale", "bf16"));
  EXPECT_FALSE(rt.Annotate("scale", "bfloat"));
  DeviceInfo info;
  info.name = "Simulated";
  EventSink* sink = rt.Start(std::make_unique<HostDevice>(), info);
  ASSERT_NE(sink, nullptr);
  EXPECT_EQ(rt.sink(), sink);
  EXPECT_EQ(rt.Start(std::make_unique<HostDevice>(), std::nullopt), sink);  // once only
  std::vector<uint16_t> buf(64, 0x3f80);
  sink->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), buf.size() * 2, AllocKind::kPlain, 0});
  LaunchBuilder b("_Z5scalePv", 42);
  b.Pointer(buf.data());
  sink->OnLaunchEnter(b.event());
  sink->OnLaunch(b.event());
  sink->OnStepMark();
  sink->OnLaunch(b.event());  // step 1: not captured
  rt.Shutdown();
  rt.Shutdown();
  const std::string path = rt.trace_path();
  EXPECT_EQ(path, dir + "/rank_3.ntrace.jsonl");
  auto lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("\"type\":\"header\""), std::string::npos);
  EXPECT_NE(lines[0].find("\"label\":\"A\""), std::string::npos);
  EXPECT_NE(lines[0].find("\"world_size\":8"), std::string::npos);
  EXPECT_NE(lines[0].find("\"name\":\"Simulated\""), std::string::npos);
  // The settings a re-capture repeats, structured: NUMTRACE_STEPS is one,
  // NUMTRACE_LABEL and NUMTRACE_OUTPUT_DIR are not.
  EXPECT_NE(lines[0].find("\"settings\":{\"NUMTRACE_STEPS\":\"0\"}"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"type\":\"kernel\""), std::string::npos);
  EXPECT_NE(lines[1].find("\"dtype\":\"bf16\""), std::string::npos);
  EXPECT_NE(lines[1].find("\"dtype_from\":\"signature\""), std::string::npos);
  EXPECT_NE(lines[2].find("\"type\":\"footer\""), std::string::npos);
  EXPECT_NE(lines[2].find("\"launches\":2"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(RuntimeTest, HeaderEnvironmentHoldsVariablesJobAndLayersValues) {
  const std::string dir = TempDir("env");
  Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "0"}, {"WORLD_SIZE", "4"},
                     {"NCCL_ALGO", "Tree"}, {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"},
                     {"NUMTRACE_JOB_GIT", "0123abc+dirty"}, {"HOME", "/root"}}));
  rt.AddEnvironment({{"gpu.name", "Simulated"}, {"cublas.version", "12.9.1"}});  // the CUDA layer, before Start
  rt.AddEnvironment({{"torch.matmul.allow_tf32", "false"}});                     // the hooks, before CUDA
  EventSink* sink = rt.Start(std::make_unique<HostDevice>(), std::nullopt);
  ASSERT_NE(sink, nullptr);
  rt.AddEnvironment({{"gpu.name", "Simulated"}});  // unchanged: not repeated
  std::vector<float> buf(16, 1.0f);
  sink->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), buf.size() * 4, AllocKind::kPlain, 0});
  LaunchBuilder b("_Z5scalePf", 7);
  b.Pointer(buf.data());
  sink->OnLaunch(b.event());
  rt.Shutdown();
  rt.AddEnvironment({{"torch.matmul.allow_tf32", "true"}});  // after the footer: nothing written
  auto lines = Lines(rt.trace_path());
  ASSERT_EQ(lines.size(), 3u);
  const std::string& h = lines[0];
  for (const char* want :
       {R"("env.CUBLAS_WORKSPACE_CONFIG":":4096:8")", R"("env.NCCL_ALGO":"Tree")", R"("job.git":"0123abc+dirty")",
        R"("job.world_size":"4")", R"("job.cwd":")", R"("gpu.name":"Simulated")", R"("cublas.version":"12.9.1")",
        R"("torch.matmul.allow_tf32":"false")"}) {
    EXPECT_NE(h.find(want), std::string::npos) << want << " in " << h;
  }
  EXPECT_EQ(h.find("HOME"), std::string::npos) << "only the variables that change numbers";
  std::filesystem::remove_all(dir);
}

TEST(RuntimeTest, StepMarksBeforeStartAreReplayed) {
  // A job that marks two steps before its first kernel: the launch after
  // Start belongs to step 2, not step 0.
  const std::string dir = TempDir("early_marks");
  Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "2"}}));
  EXPECT_FALSE(rt.MarkStep());  // counted, no engine yet
  EXPECT_FALSE(rt.MarkStep());
  EventSink* sink = rt.Start(std::make_unique<HostDevice>(), std::nullopt);
  ASSERT_NE(sink, nullptr);
  std::vector<float> buf(16, 1.0f);
  sink->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), buf.size() * 4, AllocKind::kPlain, 0});
  LaunchBuilder b("_Z5scalePf", 7);
  b.Pointer(buf.data());
  sink->OnLaunch(b.event());  // step 2: captured
  EXPECT_TRUE(rt.MarkStep());
  sink->OnLaunch(b.event());  // step 3: not captured
  rt.Shutdown();
  auto lines = Lines(rt.trace_path());
  ASSERT_EQ(lines.size(), 3u);  // header, one kernel, footer
  EXPECT_NE(lines[1].find("\"step\":2"), std::string::npos) << lines[1];
  std::filesystem::remove_all(dir);
}

// The hooks arm their dispatch mode on the steps this answers 1 or 2 for:
// at operator level in watch mode every step's ops must reach the engine.
TEST(RuntimeTest, StepCapturedArmsEveryStepAtOperatorLevelInWatchMode) {
  Runtime ops_watch(MapEnv({{"NUMTRACE_LEVEL", "ops"}, {"NUMTRACE_WATCH", "full"}, {"NUMTRACE_STEPS", "3"}}));
  EXPECT_EQ(ops_watch.StepCaptured(3), 1);
  EXPECT_EQ(ops_watch.StepCaptured(0), 2);
  EXPECT_EQ(ops_watch.StepCaptured(7), 2);
  EXPECT_EQ(ops_watch.StepCaptured(-1), 0);
  Runtime ops(MapEnv({{"NUMTRACE_LEVEL", "ops"}, {"NUMTRACE_STEPS", "3"}}));
  EXPECT_EQ(ops.StepCaptured(0), 0);
  Runtime kernels_watch(MapEnv({{"NUMTRACE_WATCH", "full"}, {"NUMTRACE_STEPS", "3"}}));
  EXPECT_EQ(kernels_watch.StepCaptured(0), 0);  // kernel level: launches are digested without the hooks
}

TEST(RuntimeTest, ProcessThatNeverCapturesWritesNothing) {
  const std::string dir = TempDir("none");
  {
    Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "5"}}));
    EventSink* sink = rt.Start(std::make_unique<HostDevice>(), std::nullopt);
    ASSERT_NE(sink, nullptr);
    LaunchBuilder b("_Z1kv", 1);
    sink->OnLaunch(b.event());
    rt.Shutdown();
    EXPECT_EQ(rt.trace_path(), "");
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/rank_0.ntrace.jsonl"));
}

// Review finding 14: Start held Runtime::mu_ while the writer registered
// with the fork registry; a fork's prepare handlers take the registry first,
// then Runtime::mu_. A fork during the first launch deadlocked. Here the
// test holds the registry as a fork in progress does, while Start runs:
// the fork's next step (Runtime's prepare handler) must not wait for
// Start. Fails before the fix: BeforeFork waits until the registry is let go.
TEST(RuntimeTest, AForkDuringStartDoesNotDeadlock) {
  const std::string dir = TempDir("forkstart");
  Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "0"}}));
  ASSERT_TRUE(rt.Configure());
  std::unique_lock<std::mutex> fork_in_progress = TraceWriter::LockForkRegistryForTest();
  std::thread starter([&] { rt.Start(std::make_unique<HostDevice>(), std::nullopt); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // Start reaches the registry
  std::promise<void> prepared;
  std::thread forker([&] {
    rt.BeforeFork();
    rt.AfterForkParent();
    prepared.set_value();
  });
  const bool no_deadlock =
      prepared.get_future().wait_for(std::chrono::seconds(3)) == std::future_status::ready;
  fork_in_progress.unlock();  // either way, let both threads finish
  starter.join();
  forker.join();
  EXPECT_TRUE(no_deadlock) << "the fork's prepare handler waited for Start (lock-order inversion)";
  EXPECT_NE(rt.sink(), nullptr);
  rt.Shutdown();
  std::filesystem::remove_all(dir);
}

// Values the layers add while Start makes the writer still reach the trace.
TEST(RuntimeTest, EnvironmentAddedDuringStartIsKept) {
  const std::string dir = TempDir("envstart");
  Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "0"}}));
  ASSERT_TRUE(rt.Configure());
  rt.AddEnvironment({{"torch.version", "2.15"}});
  std::unique_lock<std::mutex> fork_in_progress = TraceWriter::LockForkRegistryForTest();
  std::thread starter([&] { rt.Start(std::make_unique<HostDevice>(), std::nullopt); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // While the writer is being made (on a thread of its own: the code before
  // the fix held the mutex AddEnvironment needs until the registry was free).
  std::thread adder([&] { rt.AddEnvironment({{"torch.cudnn.benchmark", "false"}}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fork_in_progress.unlock();
  starter.join();
  adder.join();
  EventSink* sink = rt.sink();
  ASSERT_NE(sink, nullptr);
  std::vector<float> buf(16, 1.0f);
  sink->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), buf.size() * 4, AllocKind::kPlain, 0});
  LaunchBuilder b("_Z5scalePf", 7);
  b.Pointer(buf.data());
  sink->OnLaunchEnter(b.event());
  sink->OnLaunch(b.event());
  rt.Shutdown();
  const std::vector<std::string> lines = Lines(rt.trace_path());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("torch.version"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("torch.cudnn.benchmark"), std::string::npos) << lines[0];
  std::filesystem::remove_all(dir);
}

TEST(RuntimeTest, ForkedChildForgetsTheParentsEngineAndCanStartItsOwn) {
  const std::string dir = TempDir("fork");
  Runtime rt(MapEnv({{"NUMTRACE_OUTPUT_DIR", dir}, {"NUMTRACE_STEPS", "0"}}));
  EventSink* sink = rt.Start(std::make_unique<HostDevice>(), std::nullopt);
  ASSERT_NE(sink, nullptr);
  std::vector<float> buf(16, 1.0f);
  sink->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), 64, AllocKind::kPlain, 0});
  LaunchBuilder b("_Z1kPf", 1);
  b.Pointer(buf.data());
  sink->OnLaunch(b.event());
  // What the pthread_atfork handlers of Runtime::Get() do around fork().
  rt.BeforeFork();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rt.AfterForkChild();
    if (rt.sink() != nullptr) _exit(3);
    // The child starts CUDA itself: a new engine, a file under its own pid.
    EventSink* mine = rt.Start(std::make_unique<HostDevice>(), std::nullopt);
    if (mine == nullptr || mine == sink) _exit(4);
    mine->OnAlloc({reinterpret_cast<uint64_t>(buf.data()), 64, AllocKind::kPlain, 0});
    mine->OnLaunch(b.event());
    rt.Shutdown();
    _exit(rt.trace_path().find(".pid" + std::to_string(getpid())) != std::string::npos ? 0 : 5);
  }
  rt.AfterForkParent();
  // Make the parent's file exist first, so the child's must take the pid name.
  rt.Shutdown();
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  // The child may have created its file before the parent: either way the two differ.
  const int code = WEXITSTATUS(status);
  EXPECT_TRUE(code == 0 || code == 5) << code;
  int files = 0, footers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    auto lines = Lines(entry.path().string());
    ASSERT_EQ(lines.size(), 3u) << entry.path();  // header, one kernel, footer: nothing interleaved
    footers += lines[2].find("\"type\":\"footer\"") != std::string::npos;
  }
  EXPECT_EQ(files, 2);
  EXPECT_EQ(footers, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace numtrace::shim
