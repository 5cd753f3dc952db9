#include "bench/analyzer/buffered_file.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace numtrace::bench {

BufferedFile::BufferedFile(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) Fail();
  buf_.reserve(kFlushBytes + (64 << 10));
}

BufferedFile::~BufferedFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void BufferedFile::Fail() {
  if (error_.empty()) error_ = absl::StrCat("cannot write ", path_, ": ", std::strerror(errno));
}

void BufferedFile::Flush() {
  if (file_ != nullptr && !buf_.empty() &&
      std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size())
    Fail();
  written_ += buf_.size();
  buf_.clear();
}

absl::Status BufferedFile::Close() {
  Flush();
  if (file_ != nullptr && std::fclose(file_) != 0) Fail();
  file_ = nullptr;
  if (!error_.empty()) return absl::UnavailableError(error_);
  return absl::OkStatus();
}

}  // namespace numtrace::bench
