// File: analyzer/read/meta_record_parser.h
//
// Parses the records of trace format v1 that are not kernels: `header`
// (1.1), `note`, `environment` and `footer` (1.4). Few and small, so they are read into the
// plain structs of common/format/records.h. Known fields are type-checked
// (a wrong type is an error naming the field); unknown fields are ignored.
//
// Example:
//   TraceHeader header;
//   absl::Status s = ParseHeaderRecord(object, line_end, &header);
//   // "version: unsupported version 2 (this reader reads version 1)"
#ifndef NUMTRACE_ANALYZER_READ_META_RECORD_PARSER_H_
#define NUMTRACE_ANALYZER_READ_META_RECORD_PARSER_H_

#include "absl/status/status.h"
#include "common/format/records.h"
#include "simdjson.h"

namespace numtrace::analyzer {

// Checks `format` == "numtrace-trace" and `version` == 1 (both MUST).
absl::Status ParseHeaderRecord(simdjson::ondemand::object& object, const char* line_end,
                               TraceHeader* out);
absl::Status ParseNoteRecord(simdjson::ondemand::object& object, const char* line_end,
                             NoteRecord* out);
// An `environment` record's values, merged into `out` (the header's).
absl::Status ParseEnvironmentRecord(simdjson::ondemand::object& object, const char* line_end,
                                    EnvironmentValues* out);
absl::Status ParseFooterRecord(simdjson::ondemand::object& object, const char* line_end,
                               FooterRecord* out);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_META_RECORD_PARSER_H_
