#include "launcher/run_environment.h"

#include <fstream>

#include "gtest/gtest.h"
#include "test/launcher/launcher_test_util.h"

namespace numtrace::launcher {
namespace {

Environment Env(const std::string& name, const std::string& value) {
  Environment env;
  env.Set(name, value);
  return env;
}

InstallLayout Layout() { return LayoutFromBinDir("/opt/nt/bin", Environment()); }

TEST(RunEnvironment, PreloadsTheLibraryByAbsolutePathAndSetsEveryOptionGiven) {
  RunOptions o;
  o.Set("NUMTRACE_STEPS", "2-3");
  o.Set("NUMTRACE_STEP_MODE", "nvtx:^step$");
  o.Set("NUMTRACE_KERNEL", "regex:gemm");
  o.Set("NUMTRACE_KERNEL_EXCLUDE", "nccl");
  o.Set("NUMTRACE_LAUNCH_SKIP", "5");
  o.Set("NUMTRACE_LAUNCH_COUNT", "10");
  o.Set("NUMTRACE_OUTPUTS", "all");
  o.Set("NUMTRACE_LABEL", "eager");
  o.Set("NUMTRACE_DUMP", "seq:41");
  o.command = {"sh", "-c", "true"};
  std::vector<std::string> warnings;
  Environment env = RunEnvironment(o, "/runs/a", Env("LD_PRELOAD", "/x.so"), Layout(), &warnings);
  EXPECT_EQ(env.Get("LD_PRELOAD"), "/opt/nt/lib/libnumtrace.so:/x.so");
  EXPECT_EQ(env.Get("NUMTRACE_OUTPUT_DIR"), "/runs/a");
  EXPECT_EQ(env.Get("NUMTRACE_STEPS"), "2-3");
  EXPECT_EQ(env.Get("NUMTRACE_STEP_MODE"), "nvtx:^step$");
  EXPECT_EQ(env.Get("NUMTRACE_KERNEL"), "regex:gemm");
  EXPECT_EQ(env.Get("NUMTRACE_KERNEL_EXCLUDE"), "nccl");
  EXPECT_EQ(env.Get("NUMTRACE_LAUNCH_SKIP"), "5");
  EXPECT_EQ(env.Get("NUMTRACE_LAUNCH_COUNT"), "10");
  EXPECT_EQ(env.Get("NUMTRACE_OUTPUTS"), "all");
  EXPECT_EQ(env.Get("NUMTRACE_LABEL"), "eager");
  EXPECT_EQ(env.Get("NUMTRACE_DUMP"), "seq:41");
  EXPECT_EQ(env.Find("NUMTRACE_DUMP_DIR"), nullptr);
  EXPECT_EQ(env.Find("CUDA_INJECTION64_PATH"), nullptr);
  // sh is not Python: no hooks.
  EXPECT_EQ(env.Find("PYTHONPATH"), nullptr);
  EXPECT_TRUE(warnings.empty());
}

TEST(RunEnvironment, InjectionUsesTheDriversVariableInsteadOfThePreload) {
  RunOptions o;
  o.injection = true;
  o.command = {"./a.out"};
  std::vector<std::string> w;
  Environment env = RunEnvironment(o, "/r", Environment(), Layout(), &w);
  EXPECT_EQ(env.Get("CUDA_INJECTION64_PATH"), "/opt/nt/lib/libnumtrace.so");
  EXPECT_EQ(env.Find("LD_PRELOAD"), nullptr);
}

// Issue 18, item 7: the user's allocator is left alone unless asked
// (--allocator async), and one line says which mode and why.
TEST(RunEnvironment, TheCachingAllocatorIsLeftAloneByDefault) {
  RunOptions o;
  o.command = {"python", "t.py"};
  std::vector<std::string> w;
  const Environment job = RunEnvironment(o, "/r", Environment(), Layout(), &w);
  EXPECT_EQ(job.Find("PYTORCH_CUDA_ALLOC_CONF"), nullptr);
  // Issue 25: nothing a user needs before the job; said after it, and only
  // when the job used CUDA (run_command.cc: a kernel-level trace was written).
  EXPECT_TRUE(w.empty()) << w[0];
  EXPECT_EQ(AllocatorLineForCudaJob(job, o).rfind("allocator caching: PyTorch's allocator is left as it is", 0), 0u);
  Environment ops = job;
  ops.Set("NUMTRACE_LEVEL", "ops");
  EXPECT_EQ(AllocatorLineForCudaJob(ops, o), "") << "operator level scans no CUDA buffers";
  Environment user = Env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  const Environment user_job = RunEnvironment(o, "/r", user, Layout(), &w);
  EXPECT_EQ(user_job.Get("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_TRUE(w.empty());
  EXPECT_NE(AllocatorLineForCudaJob(user_job, o).find("(your PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)"),
            std::string::npos);
  o.command = {"./a.out"};  // not Python: nothing to say, nothing set
  EXPECT_EQ(RunEnvironment(o, "/r", Environment(), Layout(), &w).Find("PYTORCH_CUDA_ALLOC_CONF"), nullptr);
  EXPECT_TRUE(w.empty());
  o.no_torch_hooks = true;  // but a PyTorch setting without the hooks is said
  RunEnvironment(o, "/r", user, Layout(), &w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("without the PyTorch hooks"), std::string::npos) << w[0];
  EXPECT_FALSE(ChooseAllocator(user, false).tensors);
}

// Current torch reads PYTORCH_ALLOC_CONF first, PYTORCH_CUDA_ALLOC_CONF second.
TEST(RunEnvironment, PyTorchsPrimaryAllocatorVariableCountsFirst) {
  RunOptions o;
  o.command = {"python", "t.py"};
  std::vector<std::string> w;
  Environment both = Env("PYTORCH_ALLOC_CONF", "backend:cudaMallocAsync");
  both.Set("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  RunEnvironment(o, "/r", both, Layout(), &w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("your PYTORCH_ALLOC_CONF=backend:cudaMallocAsync kept"), std::string::npos) << w[0];
  w.clear();
  o.settings["NUMTRACE_ALLOCATOR"] = "async";
  Environment primary = Env("PYTORCH_ALLOC_CONF", "expandable_segments:True");
  Environment job = RunEnvironment(o, "/r", primary, Layout(), &w);
  EXPECT_EQ(job.Find("PYTORCH_CUDA_ALLOC_CONF"), nullptr) << "the user's setting wins; nothing added under it";
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("caching-allocator segments"), std::string::npos) << w[0];
}

TEST(RunEnvironment, AllocatorAsyncSetsCudaMallocAsyncOnlyWhenUnset) {
  RunOptions o;
  o.command = {"python", "t.py"};
  o.settings["NUMTRACE_ALLOCATOR"] = "async";
  std::vector<std::string> w;
  EXPECT_EQ(RunEnvironment(o, "/r", Environment(), Layout(), &w).Get("PYTORCH_CUDA_ALLOC_CONF"),
            "backend:cudaMallocAsync");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("CUDA graph trees"), std::string::npos) << "says where it is not safe: " << w[0];
  w.clear();
  Environment user = Env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  EXPECT_EQ(RunEnvironment(o, "/r", user, Layout(), &w).Get("PYTORCH_CUDA_ALLOC_CONF"),
            "expandable_segments:True");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("caching-allocator segments"), std::string::npos);
  w.clear();
  Environment async = Env("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync,x:1");
  EXPECT_EQ(RunEnvironment(o, "/r", async, Layout(), &w).Get("PYTORCH_CUDA_ALLOC_CONF"),
            "backend:cudaMallocAsync,x:1");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("kept"), std::string::npos);
}

TEST(RunEnvironment, HooksGoFirstOnPythonPathForPythonJobsUnlessRefused) {
  RunOptions o;
  o.command = {"/usr/bin/python3.12", "train.py"};
  std::vector<std::string> w;
  Environment env = RunEnvironment(o, "/r", Env("PYTHONPATH", "/mine"), Layout(), &w);
  EXPECT_EQ(env.Get("PYTHONPATH"), "/opt/nt/share/numtrace/hooks:/mine");
  EXPECT_EQ(env.Get("NUMTRACE_LIB_PATH"), "/opt/nt/lib/libnumtrace.so");
  o.no_torch_hooks = true;
  env = RunEnvironment(o, "/r", Env("PYTHONPATH", "/mine"), Layout(), &w);
  EXPECT_EQ(env.Get("PYTHONPATH"), "/mine");
  EXPECT_EQ(env.Find("NUMTRACE_LIB_PATH"), nullptr);
  RunOptions forced;
  forced.command = {"./a.out"};
  forced.torch_hooks = true;
  EXPECT_EQ(RunEnvironment(forced, "/r", Environment(), Layout(), &w).Get("PYTHONPATH"),
            "/opt/nt/share/numtrace/hooks");
}

TEST(RunEnvironment, LooksLikePythonForInterpretersLaunchersScriptsAndWrappers) {
  EXPECT_TRUE(LooksLikePython({"python", "-m", "x"}));
  EXPECT_TRUE(LooksLikePython({"torchrun", "--nproc-per-node=2", "t.py"}));
  EXPECT_TRUE(LooksLikePython({"./train.py"}));
  EXPECT_FALSE(LooksLikePython({"./mlp_train", "--steps", "2"}));
  EXPECT_FALSE(LooksLikePython({}));
  EXPECT_TRUE(LooksLikePython({"env", "CUDA_VISIBLE_DEVICES=0", "python3", "t.py"}));
  EXPECT_FALSE(LooksLikePython({"env", "A=1", "./a.out"}));
  EXPECT_FALSE(LooksLikePython({"env", "A=1"}));
  testing::TempDir dir;
  std::ofstream(dir / "run_train.sh") << "#!/bin/bash\nNGPU=8 torchrun --nproc_per_node=$NGPU -m torchtitan.train\n";
  std::ofstream(dir / "other.sh") << "#!/bin/bash\n./a.out\n";
  EXPECT_TRUE(LooksLikePython({dir / "run_train.sh"}));
  EXPECT_FALSE(LooksLikePython({dir / "other.sh"}));
}

TEST(InstallLayout, EverythingIsFoundRelativeToTheExecutable) {
  InstallLayout l = LayoutFromBinDir("/opt/numtrace/bin", Environment());
  EXPECT_EQ(l.library, "/opt/numtrace/lib/libnumtrace.so");
  EXPECT_EQ(l.hooks_dir, "/opt/numtrace/share/numtrace/hooks");
  // $NUMTRACE_LIB wins, made absolute (the job may change directory).
  InstallLayout o = LayoutFromBinDir("/opt/numtrace/bin", Env("NUMTRACE_LIB", "mylib.so"));
  ASSERT_FALSE(o.library.empty());
  EXPECT_EQ(o.library.front(), '/');
  EXPECT_NE(o.library.find("mylib.so"), std::string::npos);
}

}  // namespace
}  // namespace numtrace::launcher
