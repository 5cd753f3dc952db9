// File: launcher/run_environment.h
//
// The environment `numtrace run` gives the job - a pure function, so tests
// check every rule without starting anything:
//   * the library by absolute path: LD_PRELOAD=LIB[:old], or with
//     --injection CUDA_INJECTION64_PATH=LIB;
//   * NUMTRACE_OUTPUT_DIR (absolute) and one NUMTRACE_* per option given;
//   * the allocator (NUMTRACE_ALLOCATOR, --allocator): caching (the default)
//     leaves PyTorch's allocator as it is and the hooks report each tensor
//     from its trace; async sets PYTORCH_CUDA_ALLOC_CONF=
//     backend:cudaMallocAsync when unset (one driver allocation per tensor).
//     A user's own PYTORCH_CUDA_ALLOC_CONF is always kept. One line in
//     `warnings` says which mode and why (none for a job that is not Python
//     and has no PYTORCH_CUDA_ALLOC_CONF);
//   * the PyTorch hooks' folder first on PYTHONPATH, and NUMTRACE_LIB_PATH,
//     when CMD looks like Python (or --torch-hooks), never with --no-torch-hooks.
//
// Example:
//   std::vector<std::string> warnings;
//   Environment job = RunEnvironment(options, EnvironmentFromProcess(), layout, &warnings);
#ifndef NUMTRACE_LAUNCHER_RUN_ENVIRONMENT_H_
#define NUMTRACE_LAUNCHER_RUN_ENVIRONMENT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "launcher/environment.h"
#include "launcher/install_layout.h"
#include "launcher/run_options.h"
#include "common/settings/modes.h"

namespace numtrace::launcher {

inline constexpr const char kAllocatorSetting[] = "backend:cudaMallocAsync";

// Which allocator mode a job with settings `env` gets (NUMTRACE_ALLOCATOR,
// PYTORCH_CUDA_ALLOC_CONF) with or without the PyTorch hooks, and the line
// saying it (shared by run and doctor).
struct AllocatorChoice {
  settings::AllocatorMode mode = settings::AllocatorMode::kCaching;
  bool set_async_conf = false;  // numtrace sets PYTORCH_CUDA_ALLOC_CONF
  bool tensors = true;          // false: a PyTorch job's buffers will be whole segments
  bool tensor_map = false;      // tensors come from the hooks' tensor map (needs its bridge)
  std::string line;             // empty: nothing worth saying (not a Python job)
  // `line` says nothing a user needs unless the job turns out to use CUDA
  // (the default: PyTorch's allocator left as it is): said after the job.
  bool cuda_only = false;
};
AllocatorChoice ChooseAllocator(const Environment& env, bool hooks);

// The allocator line of a job that used CUDA (a kernel-level trace was
// written), when it was held back before the job (AllocatorChoice::cuda_only);
// else empty. An operator-level job has none: no CUDA buffers are scanned.
std::string AllocatorLineForCudaJob(const Environment& job, const RunOptions& o);

// Whether the job runs at operator level (NUMTRACE_LEVEL=ops).
bool OpsLevel(const Environment& job);

// True when CMD is a Python job: its program is python*, torchrun,
// accelerate, deepspeed or pytest, a *.py file, or a script whose first 64
// KiB name python or torchrun (a torchtitan run_train.sh); `env A=1 CMD`
// is judged by CMD.
bool LooksLikePython(const std::vector<std::string>& command);

// `output_dir_absolute` is options.output_dir() made absolute by the caller.
Environment RunEnvironment(const RunOptions& options, const std::string& output_dir_absolute,
                           const Environment& base, const InstallLayout& layout,
                           std::vector<std::string>* warnings);

// Parses the job's environment `job` (RunEnvironment's result) with the
// shim's own ParseConfig, before anything starts: a bad value is an error
// line naming the option as the user typed it (`--steps 'two' is not valid;
// accepted: ...`), or the variable when it came from the environment.
// NUMTRACE_ENABLE off adds a warning (the job will not be captured).
[[nodiscard]] absl::Status ValidateJobSettings(const Environment& job, const RunOptions& options,
                                               std::vector<std::string>* warnings);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RUN_ENVIRONMENT_H_
