// File: analyzer/read/file_contents.h
//
// A whole file in memory, followed by at least simdjson::SIMDJSON_PADDING
// readable bytes, as the importers need: the JSONL reader hands simdjson one
// line at a time and lets the rest of the buffer (then the padding) serve as
// the padding simdjson may read past a line's end.
//
// Regular files are memory-mapped (read-only, private) into a zeroed
// anonymous reservation one padding larger, so a 240 MB trace costs neither a
// copy nor the zeroing of 240 MB of fresh pages. A reader that goes front to
// back calls ReadingAt() as it goes: the pages behind it leave the process
// (they stay in the page cache) and the next window is faulted in ahead of
// it, so a mapped file holds about two windows resident instead of all of it
// (the 1M-kernel pair: two 1.2 GB files read at once). Anything mmap refuses
// (pipes, /proc files) is read into a padded_string instead.
//
// Example:
//   absl::StatusOr<FileContents> f = FileContents::Load("rank_0.ntrace.jsonl");
//   if (!f.ok()) return f.status();  // NotFound / PermissionDenied, names the path
//   std::string_view bytes = f->view();
#ifndef NUMTRACE_ANALYZER_READ_FILE_CONTENTS_H_
#define NUMTRACE_ANALYZER_READ_FILE_CONTENTS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace numtrace::analyzer {

class FileContents {
 public:
  // Errors name the path: NotFound when it does not exist, PermissionDenied
  // when it cannot be opened, InvalidArgument for a directory, Unknown for a
  // failed read.
  [[nodiscard]] static absl::StatusOr<FileContents> Load(const std::string& path);
  // A padded copy of `bytes` (tests, fuzzers).
  static FileContents Copy(std::string_view bytes);

  FileContents(FileContents&& other) noexcept;
  FileContents& operator=(FileContents&& other) noexcept;
  FileContents(const FileContents&) = delete;
  FileContents& operator=(const FileContents&) = delete;
  ~FileContents();

  // The file's bytes; SIMDJSON_PADDING more bytes are readable after them.
  std::string_view view() const { return {data_, size_}; }

  // Sequential readers: every byte before `pos` is done with (nothing points
  // into it any more). Cheap to call per line; acts once per window. Reading
  // before `pos` later stays correct (the pages fault back in), only slower.
  void ReadingAt(size_t pos) const {
    if (mapping_ != nullptr && pos >= next_check_) Advance(pos);
  }

 private:
  FileContents() = default;
  void Release();
  void Advance(size_t pos) const;

  static constexpr size_t kWindow = size_t{32} << 20;

  const char* data_ = "";
  size_t size_ = 0;
  void* mapping_ = nullptr;  // when mapped: the whole reservation
  size_t mapping_size_ = 0;
  simdjson::padded_string copy_;  // when not mapped
  // Sequential-read state of a mapping (ReadingAt): resident pages span
  // [dropped_, populated_); the next look is due at next_check_.
  mutable size_t dropped_ = 0, populated_ = 0, next_check_ = 0;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_FILE_CONTENTS_H_
