// File: analyzer/cli/error_line.h
//
// How every numtrace-diff command path reports a failure: exactly one line on
// stderr, "numtrace-diff: <message>", whatever the message holds (paths,
// kernel names and values quoted from input files are made inert by
// TerminalSafe, so a newline or ESC in them cannot add or forge a line), and
// exit status 2 (docs/format.md, section 3).
//
// Example:
//   if (!trace.ok()) return FailLine(err, trace.status());  // returns kExitError
#ifndef NUMTRACE_ANALYZER_CLI_ERROR_LINE_H_
#define NUMTRACE_ANALYZER_CLI_ERROR_LINE_H_

#include <ostream>
#include <string_view>

#include "absl/status/status.h"

namespace numtrace::analyzer {

inline constexpr int kExitSame = 0;      // identical or within tolerance
inline constexpr int kExitDiverged = 1;  // diverged (or incomplete under --strict)
inline constexpr int kExitError = 2;     // bad usage or unreadable input

// Writes the line and returns kExitError.
int FailLine(std::ostream& err, std::string_view message);
int FailLine(std::ostream& err, const absl::Status& status);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_ERROR_LINE_H_
