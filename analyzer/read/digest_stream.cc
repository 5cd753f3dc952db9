#include "analyzer/read/digest_stream.h"

#include <new>
#include <utility>

#include "analyzer/read/importer.h"
#include "analyzer/read/input.h"
#include "analyzer/read/json_fields.h"
#include "analyzer/read/text_util.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {

absl::StatusOr<std::unique_ptr<DigestStream>> DigestStream::Open(const std::string& path) {
  NT_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(path, kDigestReaderBytes));
  return std::unique_ptr<DigestStream>(new DigestStream(std::move(reader)));
}

absl::Status DigestStream::Fill(uint64_t budget, bool header_only) {
  Compact();
  try {
    LineReader::Line line;
    while (!eof_ && (!lines_.have_header() || (!header_only && (empty() || Buffered() < budget)))) {
      NT_ASSIGN_OR_RETURN(const bool more, reader_->Next(&line));
      if (!more) {
        eof_ = true;
        break;
      }
      if (absl::Status s = ParseLine(line); !s.ok()) {
        if (!line.terminated) {  // a killed process's last, partial line
          eof_ = true;
          break;
        }
        return LineError(reader_->path(), line.number, Message(s));
      }
    }
  } catch (const std::bad_alloc&) {
    return reader_->OutOfMemoryError();
  }
  if (eof_ && !lines_.have_header()) return absl::InvalidArgumentError(Cat(reader_->path(), ": empty trace"));
  return absl::OkStatus();
}

void DigestStream::Compact() {
  if (head_ == 0) return;
  const uint64_t drop = empty() ? trace_.digest_hashes.size() : Head().first;
  trace_.digests.erase(trace_.digests.begin(), trace_.digests.begin() + head_);
  for (StepDigest& d : trace_.digests) d.first -= drop;
  trace_.digest_hashes.erase(trace_.digest_hashes.begin(), trace_.digest_hashes.begin() + drop);
  trace_.digest_names.erase(trace_.digest_names.begin(), trace_.digest_names.begin() + drop);
  head_ = 0;
}

// The reader's own record dispatch (trace_reader.h), kernel and note
// records skipped; a digest record is a step.
absl::Status DigestStream::ParseLine(const LineReader::Line& line) {
  const char* p = line.text.data();
  const size_t n = line.text.size();
  if (TraceLineParser::IsBlank(p, n)) return absl::OkStatus();
  const size_t before = trace_.digests.size();
  NT_RETURN_IF_ERROR(lines_.ParseLine(p, n, line.readable, line.number));
  steps_ += trace_.digests.size() - before;
  return absl::OkStatus();
}

absl::StatusOr<bool> IsWatchTrace(const std::string& path) {
  {  // A DebugMode log has no header, and no digests.
    NT_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(path, kDigestReaderBytes));
    NT_ASSIGN_OR_RETURN(const std::string_view head, reader->Peek());
    if (ImporterForContent(head) != FindImporter("numtrace")) return false;
  }
  NT_ASSIGN_OR_RETURN(std::unique_ptr<DigestStream> s, DigestStream::Open(path));
  NT_RETURN_IF_ERROR(s->Fill(0, /*header_only=*/true));
  return s->header().capture.has_value() && !s->header().capture->watch.empty();
}

}  // namespace numtrace::analyzer
