#include "analyzer/read/trace_reader.h"

#include <cstring>

#include "absl/status/status.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/read/digest_record_parser.h"
#include "analyzer/read/json_fields.h"
#include "analyzer/read/kernel_record_parser.h"
#include "analyzer/read/meta_record_parser.h"
#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/text_util.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {
namespace {

namespace od = simdjson::ondemand;

// Whether [p, p+n) is one complete JSON value; tells a line cut short by a
// killed process from a complete but invalid last line. Needs the padding
// that follows the data.
bool IsCompleteJson(const char* p, size_t n) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  return !parser.parse(reinterpret_cast<const uint8_t*>(p), n, false).get(element);
}

}  // namespace

TraceLineParser::TraceLineParser(Trace* trace, Records records)
    : trace_(trace), records_(records), kernels_(trace), digests_(trace) {}

absl::Status TraceLineParser::ParseLine(const char* p, size_t n, size_t allocated, uint64_t line) {
  const char* end = p + n;
  od::document doc;
  if (auto e = parser_.iterate(p, n, allocated).get(doc)) {
    if (e == simdjson::MEMALLOC) throw std::bad_alloc();  // reported by the caller
    return absl::InvalidArgumentError(Cat("bad JSON (", simdjson::error_message(e), ")"));
  }
  od::object object;
  if (auto e = doc.get_object().get(object)) {
    return e == simdjson::INCORRECT_TYPE
               ? absl::InvalidArgumentError("expected a JSON object")
               : absl::InvalidArgumentError(
                     Cat("bad JSON (", simdjson::error_message(e), ")"));
  }
  od::value type_value;
  if (auto e = object.find_field_unordered("type").get(type_value)) {
    return e == simdjson::NO_SUCH_FIELD ? json::FieldError("type", "missing (MUST field)")
                                        : json::JsonError(e, "type", "a string");
  }
  std::string_view type;
  NT_RETURN_IF_ERROR(json::GetRawString(type_value, "type", end, &type));
  if (auto e = object.reset().error()) return json::JsonError(e, "type", "a string");

  if (!have_header_ && type != "header") {
    return absl::InvalidArgumentError(
        Cat("the first record must be the header, got type \"", type.substr(0, 40),
                     "\""));
  }
  if (records_ == Records::kDigests && (type == "kernel" || type == "note")) {
    return absl::OkStatus();  // not what this caller reads
  }
  if (type == "kernel") {
    NT_RETURN_IF_ERROR(kernels_.Parse(object, end));
  } else if (type == "header") {
    if (have_header_) return json::FieldError("header", "a second header (only the first line may be one)");
    NT_RETURN_IF_ERROR(json::Prefixed(ParseHeaderRecord(object, end, &trace_->header), "header "));
    have_header_ = true;
  } else if (type == "note") {
    NT_RETURN_IF_ERROR(json::Prefixed(ParseNoteRecord(object, end, &trace_->notes.emplace_back()), "note "));
  } else if (type == "digest") {
    NT_RETURN_IF_ERROR(digests_.ParseDigest(object, end));
  } else if (type == "kernel_name") {
    NT_RETURN_IF_ERROR(digests_.ParseName(object, end));
  } else if (type == "environment") {
    NT_RETURN_IF_ERROR(json::Prefixed(
        ParseEnvironmentRecord(object, end, &trace_->header.environment), "environment "));
  } else if (type == "footer") {
    NT_RETURN_IF_ERROR(json::Prefixed(ParseFooterRecord(object, end, &trace_->footer.emplace()), "footer "));
  } else {
    CountSkipped(trace_, kNumtraceSkips[0], line);  // a record type from a later version
    return absl::OkStatus();  // its contents are not ours to check
  }
  // In bounds after the whole object means something follows it.
  const char* after = nullptr;
  if (!doc.current_location().get(after)) {
    return absl::InvalidArgumentError("bad JSON (content after the object)");
  }
  return absl::OkStatus();
}

absl::StatusOr<Trace> ReadTraceLines(LineReader& reader) {
  const std::string_view path = reader.path();
  Trace trace;
  trace.path = std::string(path);
  // Typical lines: ~1.2 KB per kernel with ~3 buffers; avoids regrowth
  // (a hint only: 0 for pipes and compressed files).
  ReserveForSize(&trace, reader.size_hint() / 1024, reader.size_hint() / 340);

  TraceLineParser loop(&trace);
  LineReader::Line line;
  while (true) {
    NT_ASSIGN_OR_RETURN(const bool more, reader.Next(&line));
    if (!more) break;
    const char* p = line.text.data();
    const size_t n = line.text.size();
    if (TraceLineParser::IsBlank(p, n)) continue;
    const size_t kernels_before = trace.kernels.size();
    const size_t buffers_before = trace.buffers.size();
    const size_t notes_before = trace.notes.size();
    const bool footer_before = trace.footer.has_value();
    const size_t digests_before = trace.digests.size();
    absl::Status s = loop.ParseLine(p, n, line.readable, line.number);
    if (!s.ok()) {
      if (!line.terminated && !IsCompleteJson(p, n)) {
        // The process was killed mid-write: drop the partial line.
        trace.kernels.resize(kernels_before);
        trace.buffers.resize(buffers_before);
        trace.notes.resize(notes_before);
        if (!footer_before) trace.footer.reset();
        if (trace.digests.size() > digests_before) trace.digests.resize(digests_before);
        trace.truncated = true;
        if (!loop.have_header()) {
          return LineError(path, line.number, "the header line is cut short");
        }
        break;
      }
      return LineError(path, line.number, Message(s));
    }
  }
  if (!loop.have_header()) return absl::InvalidArgumentError(Cat(path, ": empty trace"));
  if (!trace.footer) trace.truncated = true;
  ReleaseUnusedReserve(&trace);

  const TraceHeader& h = trace.header;
  if (h.run && !h.run->label.empty()) {
    trace.label = h.run->label;
  } else {
    trace.label = std::string(FileStem(path));
  }
  if (h.run) {
    trace.rank = h.run->rank;
  } else {
    trace.rank = RankFromFileName(path).value_or(0);
  }
  return trace;
}

bool TraceLineParser::IsBlank(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n') return false;
  }
  return true;
}

}  // namespace numtrace::analyzer
