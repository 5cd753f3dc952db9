// File: analyzer/cli/across_ranks_command.h
//
// `numtrace-diff --across-ranks RUN_DIR [--json F] [-o F.html]`: reads every
// rank's trace in one run's directory and runs the cross-rank check
// (analyzer/ranks/cross_rank.h). Exit 0 when replicas agree, 1 when some kernel's inputs
// are bitwise equal across ranks while its outputs are not, 2 on bad input
// (one line naming the file). Watch traces (rank 0's header says
// capture.watch) are compared by digest instead, streaming
// (analyzer/ranks/odd_rank.h): exit 1 when the odd_rank_out list is not empty.
//
// Example:
//   numtrace-diff --across-ranks runA --json ranks.json -o ranks.html
#ifndef NUMTRACE_ANALYZER_CLI_ACROSS_RANKS_COMMAND_H_
#define NUMTRACE_ANALYZER_CLI_ACROSS_RANKS_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/ranks/cross_rank.h"

namespace numtrace::analyzer {

struct AcrossRanksOptions {
  std::string dir;
  std::string json_path, html_path;
  int top = 10;
  bool force = false, quiet = false;
};

// Paths of the rank traces in `dir` (rank_<R>.ntrace.jsonl; for several
// files of one rank the largest), by rank. Fewer than two is an error.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> RankTraceFiles(const std::string& dir);

// Returns the exit code; `err` gets one line on error.
int RunAcrossRanks(const AcrossRanksOptions& options, std::ostream& out, std::ostream& err);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_ACROSS_RANKS_COMMAND_H_
