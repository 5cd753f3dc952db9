// File: analyzer/read/trace_reader.h
//
// Reads a trace file of format v1 (docs/format.md, section 1;
// JSON Lines) into the analyzer's compact model. Built for speed and
// bounded memory: a LineReader streams the file (plain or gzip) through one
// buffer, each line is parsed in place with simdjson On Demand (the rest of
// the buffer serves as simdjson's padding), names are interned and buffers
// appended to one flat vector. Out of memory is an error naming the file and
// how far it was read, never an abort.
//
// What is an error (InvalidArgument, one line "PATH:LINE: reason" naming the
// field): bad JSON, a missing MUST field, a wrong type, an unknown dtype or
// role, a header that is not the first line, a `format` other than
// "numtrace-trace", a `version` other than 1, a `seq` that is not dense from
// 0, an empty file ("PATH: empty trace"). An unreadable file gives
// NotFound / PermissionDenied naming the path.
//
// What is not: unknown fields (ignored), unknown record types (skipped and
// counted as `unknown_record_type` in Trace::skipped), `pre` stats (checked to be objects and
// skipped), a JSON null where a number is expected in stats (read as NaN: the
// writer emits null for a value that was not finite), blank lines. A file
// without a footer is a trace cut short: Trace::truncated is set and every
// complete line is kept; a last line without a trailing newline that is not
// valid JSON is the cut itself and is dropped.
//
// Label: header run.label, else the file name without .ntrace.jsonl. Rank:
// header run.rank, else `rank_<R>` from the file name, else 0.
//
// Example:
//   absl::StatusOr<Trace> t = ReadTrace("runA/rank_0.ntrace.jsonl");  // read/importer.h
//   if (!t.ok()) { std::cerr << t.status().message() << "\n"; return 2; }
//   for (const Kernel& k : t->kernels) use(t->Name(k), t->BuffersOf(k));
#ifndef NUMTRACE_ANALYZER_READ_TRACE_READER_H_
#define NUMTRACE_ANALYZER_READ_TRACE_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/status/status.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/digest_record_parser.h"
#include "analyzer/read/importer.h"
#include "analyzer/read/kernel_record_parser.h"
#include "analyzer/read/line_reader.h"
#include "simdjson.h"

namespace numtrace::analyzer {

// The "numtrace" row of read/importer.h (ReadTrace and friends are the
// entry points); the caller catches std::bad_alloc
// (LineReader::OutOfMemoryError).
[[nodiscard]] absl::StatusOr<Trace> ReadTraceLines(LineReader& reader);

// The record dispatch of one numtrace trace, a line at a time, into a
// Trace: ReadTraceLines runs it over a whole file, the odd rank out
// (ranks/odd_rank.cc) over windows of a watch trace. The header must come
// first and only once; `kernel`, `note`, `header`, `digest`, `kernel_name`,
// `environment` and `footer` records are parsed, another type is counted in
// Trace::skipped.
class TraceLineParser {
 public:
  enum class Records : uint8_t {
    kAll,      // every record
    kDigests,  // kernel and note records skipped unparsed (only their type is read)
  };
  explicit TraceLineParser(Trace* trace, Records records = Records::kAll);
  // One line [p, p+n) numbered `line`; `allocated` bytes from p are readable
  // (at least n + simdjson's padding). Errors are "field: reason", for the
  // caller to prefix with "PATH:LINE: "; throws std::bad_alloc when simdjson
  // runs out of memory.
  absl::Status ParseLine(const char* p, size_t n, size_t allocated, uint64_t line);
  // A line of blanks only, which every reader of the format skips before
  // ParseLine.
  static bool IsBlank(const char* p, size_t n);
  bool have_header() const { return have_header_; }

 private:
  Trace* trace_;
  Records records_;
  simdjson::ondemand::parser parser_;
  KernelRecordParser kernels_;
  DigestRecordParser digests_;
  bool have_header_ = false;
};

// The records it skips and counts rather than failing on.
inline constexpr SkipCounter kNumtraceSkips[] = {
    {"unknown_record_type", "records of a type this reader does not know (a later format version): skipped", false},
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_TRACE_READER_H_
