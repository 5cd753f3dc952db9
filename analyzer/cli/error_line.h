// File: analyzer/cli/error_line.h
//
// How every numtrace-diff command path reports a failure: exactly one line on
// stderr, "<program>: <message>", whatever the message holds (paths,
// kernel names and values quoted from input files are made inert by
// TerminalSafe, so a newline or ESC in them cannot add or forge a line), and
// exit status 2, kExitError (common/format/exit_codes.h). <program> is
// "numtrace-diff", or the verb of the numtrace command that runs the diff in
// process ("numtrace diff", "numtrace twice"): one convention and one line
// writer (common/text/terminal_safe.h's ErrorLine) for both front ends, as
// launcher/command_context.h's FailLine.
//
// Example:
//   if (!trace.ok()) return FailLine(err, trace.status());  // returns kExitError
#ifndef NUMTRACE_ANALYZER_CLI_ERROR_LINE_H_
#define NUMTRACE_ANALYZER_CLI_ERROR_LINE_H_

#include <ostream>
#include <string_view>

#include "absl/status/status.h"
#include "common/format/exit_codes.h"

namespace numtrace::analyzer {

// The name failure and warning lines start with. Set once by a front end's
// main before any work (and before any thread): "numtrace-diff" unless set.
void SetProgramName(std::string_view name);
std::string_view ProgramName();

// Writes the line and returns kExitError.
int FailLine(std::ostream& err, std::string_view message);
int FailLine(std::ostream& err, const absl::Status& status);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_ERROR_LINE_H_
