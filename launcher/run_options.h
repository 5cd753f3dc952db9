// File: launcher/run_options.h
//
// What `numtrace run` (and `numtrace twice`, which runs twice) accepts: one
// option per capture setting of the settings table (common/settings/settings.h:
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

#include <span>

#include "absl/status/status.h"
#include "common/settings/settings.h"
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
  std::vector<std::string> command;  // the job: CMD ARGS...

  // "" when not given.
  const std::string& Get(const std::string& variable) const;
  void Set(const std::string& variable, const std::string& value) { settings[variable] = value; }
  const std::string& output_dir() const { return Get(kOutputDirVariable); }
};

// Registers the options above on `app` (the `-o` option is required).
// Parsing stops at the first word that is not an option or an option's
// value, or after `--`: that word and all after it are the job's command,
// taken by TakeCommand once `app` has parsed.
void AddRunOptions(CLI::App* app, RunOptions* options);

// `args` with each option whose value may be left out (`--watch`) written
// `--watch=VALUE` when given bare, so that it never takes the command's
// first word as its value. Call before parsing.
// `table` is the settings table (a test passes its own).
std::vector<std::string> NormalizeRunArgs(const std::vector<std::string>& args,
                                          std::span<const settings::Setting> table = settings::Settings());

// Sets options->command from what `app` left unparsed. Errors: no command;
// an unknown option before the command (`--stpes 2 python t.py`).
[[nodiscard]] absl::Status TakeCommand(const CLI::App& app, RunOptions* options);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RUN_OPTIONS_H_
