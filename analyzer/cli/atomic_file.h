// File: analyzer/cli/atomic_file.h
//
// Writes an output file all at once: into a temporary file beside it, then
// rename(2) over the target, so a reader (or a killed run) never sees half a
// summary or report.
//
// Example:
//   absl::Status s = WriteFileAtomically("summary.json", json);
//   // on error: "summary.json: cannot write: No space left on device"
#ifndef NUMTRACE_ANALYZER_CLI_ATOMIC_FILE_H_
#define NUMTRACE_ANALYZER_CLI_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace numtrace::analyzer {

[[nodiscard]] absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_ATOMIC_FILE_H_
