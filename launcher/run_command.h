// File: launcher/run_command.h
//
// `numtrace run -o DIR [capture options] -- CMD...`: runs CMD with
// libnumtrace.so loaded (environment rules: launcher/run_environment.h),
// passes its exit status through, then prints one line per rank
// (launcher/rank_listing.h).
//
// Example:
//   numtrace run -o runA --steps 2 --label eager -- python train.py
#ifndef NUMTRACE_LAUNCHER_RUN_COMMAND_H_
#define NUMTRACE_LAUNCHER_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "launcher/command_context.h"
#include "launcher/run_options.h"

namespace numtrace::launcher {

struct CaptureOutcome {
  std::string dir;      // absolute output directory
  bool started = true;  // false: CMD could not be run (exit_code 127 or 126, `error` says why)
  int exit_code = 0;    // the job's, as a shell gives it (128+N for signal N)
  int signal = 0;       // the signal that killed the job, else 0
  int traces = 0;       // trace files found afterwards
  std::string error;
};

// Prepares DIR, runs the job, lists the traces (on stderr: stdout is the
// job's). An error (bad setting, bad DIR, missing library) is a Status; a
// job that fails, or a CMD that cannot be run, is not.
[[nodiscard]] absl::StatusOr<CaptureOutcome> CaptureJob(const RunOptions& options,
                                                        const CommandContext& ctx);

// Judges every capture setting of the job (options and the NUMTRACE_* already
// in ctx.env) as the shim will, creating and starting nothing; warnings
// (NUMTRACE_ENABLE off, the allocator setting) are appended. An error names
// the option as typed.
[[nodiscard]] absl::Status CheckJobSettings(const RunOptions& options, const CommandContext& ctx,
                                            std::vector<std::string>* warnings);

// args[0] == "run". Returns the job's exit status, 127/126 when CMD cannot
// be run, or 2 on a usage error.
int RunCommandMain(const std::vector<std::string>& args, const CommandContext& ctx);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RUN_COMMAND_H_
