// File: analyzer/cli/merge_command.h
//
// `numtrace merge S1 S2 ... --json OUT`: shard summaries of one run pair (numtrace diff A B
// --ranks LIST) combined into the summary of the whole run
// (analyzer/report/summary_merge.h). Reads the summaries only, each at most
// kMaxDiffSummaryBytes; OUT is checked like every numtrace-diff output (never
// one of the inputs, an existing file only with --force). Exit status as
// numtrace diff: 0 identical or within tolerance, 1 diverged (or, under
// --strict, incomplete: a rank in no shard or an incomplete trace), 2 a bad
// or refused input, one line naming the file.
//
// Example:
//   int code = MergeMain(argc, argv, std::cout, std::cerr);
#ifndef NUMTRACE_ANALYZER_CLI_MERGE_COMMAND_H_
#define NUMTRACE_ANALYZER_CLI_MERGE_COMMAND_H_

#include <ostream>

namespace numtrace::analyzer {

int MergeMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_MERGE_COMMAND_H_
