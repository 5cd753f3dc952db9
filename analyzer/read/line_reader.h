// File: analyzer/read/line_reader.h
//
// A trace file, one line at a time, in bounded memory: the readers never hold
// more of the input than one buffer (4 MiB, grown up to the line cap for a
// long line), whatever the file's size - so the address space a diff needs is
// what the traces' records need, not the files' size (two 1.2 GB inputs under
// `ulimit -v` are fine).
//
// Each line handed out is followed by at least simdjson::SIMDJSON_PADDING
// readable bytes (what follows it in the buffer, or zeroed padding), so the
// JSONL reader can parse it in place with simdjson On Demand.
//
// What it refuses, early and in one line (docs/format.md, "Reader limits"):
// - a line longer than kMaxLineBytes ("line N is longer than 16 MiB"): a
//   file that is not a trace (or /dev/urandom) is rejected after at most one
//   buffer, not after reading gigabytes;
// - a NUL byte ("binary data"): /dev/zero, executables, core files;
// - corrupt gzip data.
// What it accepts: gzip-compressed input (magic 1f 8b, also concatenated
// members), decompressed through zlib as it is read - a `.gz` trace is read
// as is; a gzip stream cut short ends the input there (the readers then see
// a trace cut short); a UTF-8 byte order mark at the start (skipped).
// Open errors have their own words: no such file, permission denied, a
// symlink loop, a directory.
//
// Example:
//   absl::StatusOr<std::unique_ptr<LineReader>> r = LineReader::Open("rank_0.ntrace.jsonl");
//   if (!r.ok()) return r.status();
//   LineReader::Line line;
//   while (true) {
//     absl::StatusOr<bool> more = (*r)->Next(&line);
//     if (!more.ok()) return more.status();   // "PATH:LINE: ..." or "PATH: ..."
//     if (!*more) break;
//     use(line.text);                          // without the '\n'
//   }
#ifndef NUMTRACE_ANALYZER_READ_LINE_READER_H_
#define NUMTRACE_ANALYZER_READ_LINE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

class LineReader {
 public:
  // The longest line accepted (a kernel record is ~1 KB; one with 10,000
  // buffers ~4 MB).
  static constexpr size_t kMaxLineBytes = size_t{16} << 20;

  struct Line {
    std::string_view text;  // without the '\n'
    bool terminated = false;  // false: the input's last bytes, no '\n' after them
    size_t readable = 0;      // bytes readable from text.data(), >= size + padding
    uint64_t number = 0;      // 1-based
  };

  // Errors name the path: NotFound, PermissionDenied, InvalidArgument (a
  // directory, a symlink loop), Unknown.
  // `buffer_bytes`: the buffer to start with (0: 4 MiB); a reader of many
  // files at once (--across-ranks, one per rank) starts small, and a long
  // line still grows it up to kMaxLineBytes.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LineReader>> Open(const std::string& path,
                                                                        size_t buffer_bytes = 0);
  // Lines of bytes already in memory (tests, fuzzers); same checks.
  static std::unique_ptr<LineReader> FromBytes(std::string_view bytes, std::string path_for_messages);

  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line: true, false at the end of the input, or an error
  // ("PATH:LINE: ..." for a line too long, "PATH: ..." otherwise).
  [[nodiscard]] absl::StatusOr<bool> Next(Line* line);

  // The first bytes of the input (up to 4 KiB, BOM skipped) without
  // consuming them, for format detection; "" for an empty input.
  [[nodiscard]] absl::StatusOr<std::string_view> Peek();

  // Everything not yet handed out, whole (a format that is one document, not
  // lines): appended to *out, without the line-length limit.
  [[nodiscard]] absl::Status ReadRest(std::string* out);

  const std::string& path() const { return path_; }
  bool gzip() const { return gzip_ != nullptr; }
  // The file's size on disk when known (regular files), else 0: a hint for
  // reserving the model's vectors.
  uint64_t size_hint() const { return size_hint_; }
  // Input bytes delivered so far (decompressed) and lines handed out.
  uint64_t bytes_consumed() const { return consumed_; }
  uint64_t lines() const { return line_no_; }
  // ResourceExhausted "PATH: out of memory after reading N lines (M MB) of
  // it ..." - what a reader returns when an allocation fails.
  absl::Status OutOfMemoryError() const;
  // A gzip input whose last member ends early (the compressor was cut short).
  bool gzip_cut_short() const { return gzip_cut_; }

 private:
  struct Gzip;
  LineReader(std::string path, int fd);
  absl::Status Fill();  // reads more into the buffer; sets eof_ at the end
  absl::Status Grow(size_t want);
  absl::Status ReadRaw(char* dst, size_t cap, size_t* got);

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<Gzip> gzip_;
  bool started_ = false, eof_ = false, gzip_cut_ = false;
  std::string memory_;  // FromBytes: the bytes, served from memory_pos_
  size_t memory_pos_ = 0;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;                 // data capacity; the allocation is cap_ + padding
  size_t initial_cap_ = 0;         // Open's buffer_bytes (0: the default)
  size_t begin_ = 0, end_ = 0;     // unconsumed bytes
  size_t scan_ = 0;                // no '\n' in [begin_, scan_)
  uint64_t size_hint_ = 0, consumed_ = 0, line_no_ = 0, offset_ = 0;
};

// Reserves room for about `kernels` kernels and `buffers` buffers (an
// estimate from the file size, which avoids regrowth); only a hint - where
// the estimate does not fit in memory, the vectors grow as records come.
void ReserveForSize(Trace* trace, uint64_t kernels, uint64_t buffers);
// Gives back what that estimate reserved beyond twice what was read (a file
// of mostly skipped records, say), so that a trace read first does not hold
// the memory the second one needs.
void ReleaseUnusedReserve(Trace* trace);


}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_LINE_READER_H_
