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
[[nodiscard]] absl::StatusOr<std::string> PrepareOutputDir(const std::string& dir, bool force);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_OUTPUT_DIR_H_
