// File: bench/analyzer/buffered_file.h
//
// An output file written in large chunks (one fwrite per ~8 MB), so the
// generators spend their time formatting records, not in syscalls. The first
// write error is kept and returned by Close(), naming the file.
//
// Example:
//   BufferedFile out("a.jsonl");
//   out.buffer()->append("{...}\n");
//   out.MaybeFlush();
//   absl::Status s = out.Close();
#ifndef NUMTRACE_BENCH_ANALYZER_BUFFERED_FILE_H_
#define NUMTRACE_BENCH_ANALYZER_BUFFERED_FILE_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"

namespace numtrace::bench {

class BufferedFile {
 public:
  explicit BufferedFile(std::string path);
  ~BufferedFile();
  BufferedFile(const BufferedFile&) = delete;
  BufferedFile& operator=(const BufferedFile&) = delete;

  // Append to this; call MaybeFlush() after each record.
  std::string* buffer() { return &buf_; }
  void MaybeFlush() {
    if (buf_.size() >= kFlushBytes) Flush();
  }
  [[nodiscard]] absl::Status Close();
  uint64_t bytes() const { return written_ + buf_.size(); }

 private:
  static constexpr size_t kFlushBytes = 8 << 20;
  void Flush();
  void Fail();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buf_;
  uint64_t written_ = 0;
  std::string error_;
};

}  // namespace numtrace::bench

#endif  // NUMTRACE_BENCH_ANALYZER_BUFFERED_FILE_H_
