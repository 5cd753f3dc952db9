// File: analyzer/read/input.h
//
// What numtrace-diff's two arguments are: two trace files (any format of
// read/importer.h, detected by content), or two directories of per-rank
// traces paired by rank.
//
// Example:
//   absl::StatusOr<std::vector<RankPair>> pairs = PairInputs("runA", "runB");
//   for (const RankPair& p : *pairs) {
//     absl::StatusOr<Trace> a = ReadTrace(p.path_a), b = ReadTrace(p.path_b);
//   }
#ifndef NUMTRACE_ANALYZER_READ_INPUT_H_
#define NUMTRACE_ANALYZER_READ_INPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/importer.h"

namespace numtrace::analyzer {

struct RankPair {
  int64_t rank = 0;
  std::string path_a;
  std::string path_b;
  // Notes for the report about how this pair was chosen (none today: an
  // ambiguous choice is an error).
  std::vector<std::string> warnings;
};

// Two files: one pair (rank from A's file name, else B's, else 0). Two
// directories: the trace files of each (the names an importer's row
// recognises: `rank_<R>.ntrace.jsonl`, `rank_<R>.pid<P>.ntrace.jsonl`,
// `rank_<R>_activations.log`; other files are not looked at) paired by rank, ascending. When a directory holds several
// files of one rank (a launcher and its child both traced, or two runs wrote
// into it), the one file name both directories hold for that rank is paired;
// without one, it is an error listing the candidates and how to choose (give
// the two files) - never a guess by size. Errors (InvalidArgument unless a path is missing, NotFound):
// a rank present on one side only (names the rank and the file), a directory
// without trace files (names it), a file paired with a directory.
[[nodiscard]] absl::StatusOr<std::vector<RankPair>> PairInputs(const std::string& a,
                                                               const std::string& b);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_INPUT_H_
