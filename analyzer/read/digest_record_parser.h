// File: analyzer/read/digest_record_parser.h
//
// Parses watch mode's records (docs/format.md, `digest` and `kernel_name`)
// into Trace::digests and its flat per-launch arrays. `names[i]` may be an
// id of a `kernel_name` record seen earlier in the file or the name itself;
// an id never defined, a `kernels` count that disagrees with the arrays or a
// malformed hash is an error naming the field.
//
// Example:
//   DigestRecordParser digests(&trace);
//   if (type == "kernel_name") s = digests.ParseName(object, line_end);
//   if (type == "digest") s = digests.ParseDigest(object, line_end);
#ifndef NUMTRACE_ANALYZER_READ_DIGEST_RECORD_PARSER_H_
#define NUMTRACE_ANALYZER_READ_DIGEST_RECORD_PARSER_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "analyzer/model/trace.h"
#include "simdjson.h"

namespace numtrace::analyzer {

class DigestRecordParser {
 public:
  explicit DigestRecordParser(Trace* trace) : trace_(trace) {}
  absl::Status ParseName(simdjson::ondemand::object& object, const char* line_end);
  // On error nothing of the record is kept.
  absl::Status ParseDigest(simdjson::ondemand::object& object, const char* line_end);

 private:
  absl::Status Parse(simdjson::ondemand::object& object, const char* line_end, StepDigest* d);
  Trace* trace_;
  absl::flat_hash_map<uint64_t, StringId> names_;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_DIGEST_RECORD_PARSER_H_
