// File: analyzer/read/digest_stream.h
//
// A numtrace watch trace read a window of digest records at a time, for
// comparisons that walk many ranks' traces step by step without holding
// any of them whole (ranks/odd_rank.h). Lines go through the trace reader's
// own record dispatch (trace_reader.h, TraceLineParser); kernel and note
// records are skipped unparsed beyond their `type`. Only the numtrace format
// carries digests: whether a file is such a trace is decided here, by the
// importer table, so no stage after read/ asks which format a file is.
//
// Example:
//   absl::StatusOr<bool> watch = IsWatchTrace("run/rank_0.ntrace.jsonl");
//   NT_ASSIGN_OR_RETURN(std::unique_ptr<DigestStream> s, DigestStream::Open(path));
//   NT_RETURN_IF_ERROR(s->Fill(/*budget=*/1 << 20));
//   for (; !s->empty(); s->Pop()) Use(s->Head());
#ifndef NUMTRACE_ANALYZER_READ_DIGEST_STREAM_H_
#define NUMTRACE_ANALYZER_READ_DIGEST_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/read/trace_reader.h"

namespace numtrace::analyzer {

// Whether `path` is a numtrace trace captured in watch mode (its header's
// capture.watch); reads the header only. A DebugMode log (no header, no
// digests) is not.
[[nodiscard]] absl::StatusOr<bool> IsWatchTrace(const std::string& path);

// The line reader's buffer, per stream: many ranks' streams are open at once.
inline constexpr size_t kDigestReaderBytes = 64 << 10;

class DigestStream {
 public:
  static absl::StatusOr<std::unique_ptr<DigestStream>> Open(const std::string& path);

  // Drops the records consumed, then reads until `budget` launches (and at
  // least one step) are buffered or the file ends; a killed process's last,
  // partial line ends the file. `header_only`: stop once the header is read.
  absl::Status Fill(uint64_t budget, bool header_only = false);

  bool empty() const { return head_ == trace_.digests.size(); }
  bool ended() const { return eof_; }
  const StepDigest& Head() const { return trace_.digests[head_]; }
  uint64_t Digest(uint64_t i) const { return trace_.digest_hashes[Head().first + i]; }
  std::string_view Name(uint64_t i) const { return trace_.strings.View(trace_.digest_names[Head().first + i]); }
  void Pop() { ++head_; }

  uint64_t steps() const { return steps_; }
  bool truncated() const { return !trace_.footer.has_value(); }
  const TraceHeader& header() const { return trace_.header; }
  const std::string& path() const { return reader_->path(); }

 private:
  explicit DigestStream(std::unique_ptr<LineReader> reader) : reader_(std::move(reader)) {}

  uint64_t Buffered() const { return trace_.digest_hashes.size() - (empty() ? trace_.digest_hashes.size() : Head().first); }
  void Compact();
  absl::Status ParseLine(const LineReader::Line& line);

  std::unique_ptr<LineReader> reader_;
  Trace trace_;  // the header, the names, the window's digests
  TraceLineParser lines_{&trace_, TraceLineParser::Records::kDigests};
  size_t head_ = 0;
  uint64_t steps_ = 0;
  bool eof_ = false;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_DIGEST_STREAM_H_
