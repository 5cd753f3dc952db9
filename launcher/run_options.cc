#include "launcher/run_options.h"

#include "CLI/CLI.hpp"

namespace numtrace::launcher {

void AddRunOptions(CLI::App* app, RunOptions* o) {
  app->add_option("-o,--output", o->output_dir, "directory for the traces (one file per rank)")
      ->required();
  app->add_flag("--force", o->force, "use DIR even if it exists and is not empty");
  app->add_option("--steps", o->steps, "steps to capture: all, N, N-M, N,M (NUMTRACE_STEPS)");
  app->add_option("--step-mark", o->step_mark,
                  "what delimits a step: api, profiler, nvtx:RE, kernel:RE, launches:N "
                  "(NUMTRACE_STEP_MODE)");
  app->add_option("--kernel-name", o->kernel_name,
                  "capture only kernels matching (regex:RE or substring; NUMTRACE_KERNEL)");
  app->add_option("--kernel-name-exclude", o->kernel_exclude,
                  "leave out kernels matching (NUMTRACE_KERNEL_EXCLUDE)");
  app->add_option("--launch-skip", o->launch_skip, "skip the first N launches (NUMTRACE_LAUNCH_SKIP)");
  app->add_option("--launch-count", o->launch_count,
                  "capture at most N launches (NUMTRACE_LAUNCH_COUNT)");
  app->add_option("--outputs", o->outputs, "changed (default) or all (NUMTRACE_OUTPUTS)");
  app->add_option("--label", o->label, "label written in the trace header (NUMTRACE_LABEL)");
  // A flag whose bare form means "full"; `--watch=sampled` picks the mode.
  app->add_flag("--watch{full}", o->watch,
                "a digest of every launch on every step (--watch=full, the default, or --watch=sampled: "
                "about 1/32 of each buffer's bytes); steps in full only with --steps (NUMTRACE_WATCH)")
      ->check(CLI::IsMember({"full", "sampled", "off"}));
  app->add_option("--dump", o->dump, "tensor dumps of the selected launches (NUMTRACE_DUMP)");
  app->add_option("--dump-dir", o->dump_dir, "where dumps go (NUMTRACE_DUMP_DIR; default DIR)");
  app->add_option("--dump-expect", o->dump_expect,
                  "NAME@BYTES,...: the kernel and buffer sizes the trace recorded at the dumped launch; "
                  "another launch gets a note (NUMTRACE_DUMP_EXPECT)");
  app->add_option("--dump-first-divergence", o->dump_first_divergence,
                  "SUMMARY.json of numtrace diff --json: dump its first divergence (with --side a|b)");
  app->add_option("--side", o->side, "a or b: which run's launch --dump-first-divergence dumps")
      ->check(CLI::IsMember({"a", "b"}));
  app->add_flag("--torch-hooks", o->torch_hooks,
                "put the PyTorch hooks on PYTHONPATH even if CMD does not look like Python");
  app->add_flag("--no-torch-hooks", o->no_torch_hooks, "never put the PyTorch hooks on PYTHONPATH");
  app->add_flag("--injection", o->injection,
                "load the library through CUDA_INJECTION64_PATH instead of LD_PRELOAD");
  app->add_option("command", o->command, "the job: -- CMD ARGS...")->required();
}

}  // namespace numtrace::launcher
