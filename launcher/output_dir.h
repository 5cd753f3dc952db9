// File: launcher/output_dir.h
//
// The run directory rule: a capture goes into a fresh directory. An existing
// non-empty one is refused unless --force (traces are created O_EXCL and
// diff pairs files by rank: leftovers from an earlier run would mix in).
//
// Example:
//   absl::StatusOr<std::string> dir = PrepareOutputDir("runA", /*force=*/false);
//   *dir   // "/home/me/runA", created
#ifndef NUMTRACE_LAUNCHER_OUTPUT_DIR_H_
#define NUMTRACE_LAUNCHER_OUTPUT_DIR_H_

#include <string>

#include "absl/status/statusor.h"

namespace numtrace::launcher {

// Creates the directory (and parents); returns its absolute path.
// Refuses, before anything is created, a directory the job could not write
// its traces into (a read-only file system): a long job must not run for nothing.
[[nodiscard]] absl::StatusOr<std::string> PrepareOutputDir(const std::string& dir, bool force);

// The PyTorch hooks' log (--hooks-log FILE), judged before the job like any
// other output (analyzer/cli/output_file.h): FILE may be absent or an
// existing regular file (appended to), never a symbolic link, a directory,
// a fifo or a device, never a trace (by name or by content), never inside
// the run's output directory `output_dir` (where the traces go), and its
// directory must exist and be writable. `log` and `output_dir` absolute.
[[nodiscard]] absl::Status CheckHooksLog(const std::string& log, const std::string& output_dir);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_OUTPUT_DIR_H_
