// File: test/analyzer/read/outsider/toy_ops_reader.h
//
// A reader written as an outsider would add one (docs/format.md, "Adding a
// reader"): this file pair and one row in analyzer/read/importer.cc, nothing
// else. The outsider test (outsider_reader_test.cc) builds the read library
// with that row added and reads these files through the ordinary entry points.
//
// The format, made up for the test: a first line "# toy ops v1", then one
// operator a line, "name,l2" (its output's L2 norm); files per rank are
// named toy_rank_<R>.csv. A line that is not "name,number" is skipped and
// counted (`bad_line`), not fatal.
//
// Example:
//   # toy ops v1
//   layers.0/mm,12.5
#ifndef NUMTRACE_TEST_ANALYZER_READ_OUTSIDER_TOY_OPS_READER_H_
#define NUMTRACE_TEST_ANALYZER_READ_OUTSIDER_TOY_OPS_READER_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/importer.h"
#include "analyzer/read/line_reader.h"

namespace numtrace::analyzer {

std::optional<int64_t> ToyOpsRank(std::string_view file_name);
bool SniffToyOps(std::string_view head);
[[nodiscard]] absl::StatusOr<Trace> ReadToyOps(LineReader& reader);

inline constexpr SkipCounter kToyOpsSkips[] = {
    {"bad_line", "lines that are not \"name,number\": skipped", true},
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_TEST_ANALYZER_READ_OUTSIDER_TOY_OPS_READER_H_
