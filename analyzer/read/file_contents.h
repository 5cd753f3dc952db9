// File: analyzer/read/file_contents.h
//
// Loads a whole file into one simdjson::padded_string. Both importers parse
// in place from this buffer: the JSONL reader hands simdjson one line at a
// time and lets the rest of the buffer (then the padding) serve as the
// SIMDJSON_PADDING that simdjson may read past a line's end.
//
// Example:
//   absl::StatusOr<simdjson::padded_string> data = LoadFile("rank_0.ntrace.jsonl");
//   if (!data.ok()) return data.status();  // NotFound / PermissionDenied, names the path
#ifndef NUMTRACE_ANALYZER_READ_FILE_CONTENTS_H_
#define NUMTRACE_ANALYZER_READ_FILE_CONTENTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace numtrace::analyzer {

// The file's bytes, padded. Errors name the path: NotFound when it does not
// exist, PermissionDenied when it cannot be opened for reading,
// InvalidArgument for a directory, Unknown for a failed read.
[[nodiscard]] absl::StatusOr<simdjson::padded_string> LoadFile(const std::string& path);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_FILE_CONTENTS_H_
