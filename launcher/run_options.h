// File: launcher/run_options.h
//
// What `numtrace run` (and `numtrace twice`, which runs twice) accepts: the
// capture settings as options named like compute-sanitizer's and nsys's,
// each turned into the NUMTRACE_* variable docs/configuration.md describes.
//
// Example:
//   RunOptions o;
//   AddRunOptions(&app, &o);   // -o, --steps, --step-mark, ... -- CMD...
#ifndef NUMTRACE_LAUNCHER_RUN_OPTIONS_H_
#define NUMTRACE_LAUNCHER_RUN_OPTIONS_H_

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace numtrace::launcher {

struct RunOptions {
  std::string output_dir;      // -o: NUMTRACE_OUTPUT_DIR (made absolute)
  bool force = false;          // --force: accept an existing non-empty DIR
  std::string steps;           // NUMTRACE_STEPS
  std::string step_mark;       // NUMTRACE_STEP_MODE
  std::string kernel_name;     // NUMTRACE_KERNEL
  std::string kernel_exclude;  // NUMTRACE_KERNEL_EXCLUDE
  std::string launch_skip;     // NUMTRACE_LAUNCH_SKIP
  std::string launch_count;    // NUMTRACE_LAUNCH_COUNT
  std::string outputs;         // NUMTRACE_OUTPUTS
  std::string label;           // NUMTRACE_LABEL
  std::string watch;           // --watch[=full|sampled]: NUMTRACE_WATCH (empty: off)
  std::string dump;            // NUMTRACE_DUMP (docs/format.md section 5)
  std::string dump_dir;        // NUMTRACE_DUMP_DIR
  std::string dump_expect;     // NUMTRACE_DUMP_EXPECT: NAME@BYTES,... the trace recorded
  std::string dump_first_divergence;  // SUMMARY.json: dump its first divergence (dump_from_summary.h)
  std::string side;                   // a or b, with dump_first_divergence
  bool torch_hooks = false;    // --torch-hooks: hooks even if CMD does not look like Python
  bool no_torch_hooks = false; // --no-torch-hooks
  bool injection = false;      // --injection: CUDA_INJECTION64_PATH instead of LD_PRELOAD
  std::vector<std::string> command;  // after --
};

// Registers the options above on `app` (the `-o` option is required).
void AddRunOptions(CLI::App* app, RunOptions* options);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RUN_OPTIONS_H_
