// File: launcher/run_options.h
//
// What `numtrace run` (and `numtrace twice`, which runs twice) accepts: one
// option per capture setting of the settings table (shim/engine/settings.h:
// -o, --steps, --step-mark, ...), each turned into its NUMTRACE_* variable,
// plus the launcher's own options (--force, --dump-first-divergence, the
// hooks, --injection). The options are registered from the table, so
// --help, docs/configuration.md and the shim cannot disagree.
//
// Example:
//   RunOptions o;
//   AddRunOptions(&app, &o);   // -o, --steps, --step-mark, ... -- CMD...
//   o.Get("NUMTRACE_STEPS")    // "2" after `--steps 2`
#ifndef NUMTRACE_LAUNCHER_RUN_OPTIONS_H_
#define NUMTRACE_LAUNCHER_RUN_OPTIONS_H_

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace numtrace::launcher {

inline constexpr const char kOutputDirVariable[] = "NUMTRACE_OUTPUT_DIR";

struct RunOptions {
  // NUMTRACE_* variable -> value, for each setting given as an option (or
  // filled in by the launcher, as --dump-first-divergence does).
  std::map<std::string, std::string> settings;
  // NUMTRACE_* variable -> the option that set it, as the user typed it
  // (--steps), so a bad value is reported under the name the user knows.
  std::map<std::string, std::string> typed_as;
  bool force = false;          // --force: accept an existing non-empty DIR
  std::string dump_first_divergence;  // SUMMARY.json: dump its first divergence (dump_from_summary.h)
  std::string side;                   // a or b, with dump_first_divergence
  bool torch_hooks = false;    // --torch-hooks: hooks even if CMD does not look like Python
  bool no_torch_hooks = false; // --no-torch-hooks
  bool injection = false;      // --injection: CUDA_INJECTION64_PATH instead of LD_PRELOAD
  std::vector<std::string> command;  // after --

  // "" when not given.
  const std::string& Get(const std::string& variable) const;
  void Set(const std::string& variable, const std::string& value) { settings[variable] = value; }
  const std::string& output_dir() const { return Get(kOutputDirVariable); }
};

// Registers the options above on `app` (the `-o` option is required).
void AddRunOptions(CLI::App* app, RunOptions* options);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RUN_OPTIONS_H_
