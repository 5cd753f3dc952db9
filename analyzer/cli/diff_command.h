// File: analyzer/cli/diff_command.h
//
// numtrace-diff as a function: command line in, exit code and outputs out.
// main.cc only forwards argv and the real streams, so tests drive the whole
// command (parsing, reading, aligning, judging, reporting) in process.
//
// Exit codes (docs/format.md, section 3): 0 identical or
// within tolerance, 1 diverged, 2 bad usage or unreadable input with one
// line on stderr naming the file (and line). An incomplete comparison (a
// trace cut short, records dropped, kernels unmeasured) prints one warning
// line on stderr, also under --quiet, and exits 1 under --strict. Existing outputs are never
// overwritten without --force, and that is checked before any work.
//
// Example:
//   std::ostringstream out, err;
//   const char* argv[] = {"numtrace-diff", "runA", "runB", "--json", "s.json"};
//   int code = DiffMain(5, argv, out, err, /*stdout_is_tty=*/false);  // 0, 1 or 2
#ifndef NUMTRACE_ANALYZER_CLI_DIFF_COMMAND_H_
#define NUMTRACE_ANALYZER_CLI_DIFF_COMMAND_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/cli/error_line.h"
#include "analyzer/report/terminal_summary.h"
#include "common/format/diff_summary.h"

namespace numtrace::analyzer {

struct DiffCommandOptions {
  std::string a, b;               // both files or both directories
  std::string json_path;          // --json
  std::string html_path;          // -o/--html
  std::string override_path;      // --override
  double rtol = 1e-5, atol = 0;   // --rtol, --atol
  int top = 10;                   // --top: largest divergences listed
  bool force = false;             // --force: replace existing outputs
  bool quiet = false;             // --quiet: no terminal summary
  bool strict = false;            // --strict: exit 1 when the comparison is incomplete
  bool verbose = false;           // --verbose: capture counters at 0 too
  ColorMode color = ColorMode::kAuto;
  // --ranks: compare only these ranks of two directories; the summary is
  // then a shard (`shard`: these ranks of how many).
  std::optional<std::vector<int64_t>> ranks;
  // In process (`numtrace twice`): when set, receives the rolled-up summary
  // of this comparison, the one --json writes, without reading a file back.
  DiffSummaryView* summary = nullptr;
};

// Runs a parsed command; returns the exit code.
int RunDiffCommand(const DiffCommandOptions& options, std::ostream& out, std::ostream& err,
                   bool stdout_is_tty);

// Parses argv (CLI11) and runs it; --help prints usage and returns 0.
int DiffMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
             bool stdout_is_tty);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_DIFF_COMMAND_H_
