#include "analyzer/read/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "analyzer/read/json_fields.h"
#include "analyzer/read/text_util.h"
#include "simdjson.h"

namespace numtrace::analyzer {
namespace {

constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;
constexpr size_t kInitialBuffer = size_t{4} << 20;
constexpr size_t kGzipInput = size_t{1} << 20;
constexpr size_t kPeekBytes = 4096;

absl::Status OpenError(int err, const std::string& path) {
  switch (err) {
    case ENOENT: return absl::NotFoundError(Cat(path, ": no such file"));
    case ENOTDIR: return absl::NotFoundError(Cat(path, ": no such file (a part of the path is not a directory)"));
    case EACCES: case EPERM: return absl::PermissionDeniedError(Cat(path, ": permission denied"));
    case ELOOP:
      return absl::InvalidArgumentError(
          Cat(path, ": a symlink loop (too many levels of symbolic links)"));
    default: return absl::UnknownError(Cat(path, ": cannot open: ", std::strerror(err)));
  }
}

}  // namespace

// zlib's inflate state and its input buffer, for a gzip-compressed input.
struct LineReader::Gzip {
  z_stream z{};
  std::unique_ptr<unsigned char[]> in{new unsigned char[kGzipInput]};
  bool input_done = false;  // the file has no more compressed bytes
  bool in_member = true;    // inside a gzip member (a cut here ends the input)
  ~Gzip() { inflateEnd(&z); }
};

LineReader::LineReader(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path, size_t buffer_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(errno, path);
  std::unique_ptr<LineReader> r(new LineReader(path, fd));
  r->initial_cap_ = buffer_bytes == 0 ? kInitialBuffer : std::clamp(buffer_bytes, size_t{4096}, kInitialBuffer);
  struct stat st;
  if (::fstat(fd, &st) != 0) return OpenError(errno, path);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(Cat(path, ": is a directory, not a trace file"));
  if (S_ISREG(st.st_mode)) {
    r->size_hint_ = static_cast<uint64_t>(st.st_size);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  return r;
}

std::unique_ptr<LineReader> LineReader::FromBytes(std::string_view bytes, std::string path) {
  // A pipe would do, but a memory source keeps tests free of threads: the
  // bytes are served by ReadRaw from a private copy.
  std::unique_ptr<LineReader> r(new LineReader(std::move(path), -1));
  r->memory_.assign(bytes.data(), bytes.size());
  r->size_hint_ = bytes.size();
  return r;
}

absl::Status LineReader::Grow(size_t want) {
  size_t cap = std::max(cap_ * 2, want);
  std::unique_ptr<char[]> bigger(new char[cap + kPadding]);
  if (end_ > begin_) std::memcpy(bigger.get(), buf_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  scan_ -= begin_;
  begin_ = 0;
  buf_ = std::move(bigger);
  cap_ = cap;
  return absl::OkStatus();
}

// Raw bytes of the source (file or memory), before decompression.
static absl::Status ReadSource(int fd, std::string* memory, size_t* memory_pos, const std::string& path,
                               char* dst, size_t cap, size_t* got) {
  *got = 0;
  if (fd < 0) {
    size_t n = std::min(cap, memory->size() - *memory_pos);
    std::memcpy(dst, memory->data() + *memory_pos, n);
    *memory_pos += n;
    *got = n;
    return absl::OkStatus();
  }
  while (true) {
    ssize_t n = ::read(fd, dst, cap);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnknownError(Cat(path, ": cannot read: ", std::strerror(errno)));
    *got = static_cast<size_t>(n);
    return absl::OkStatus();
  }
}

absl::Status LineReader::ReadRaw(char* dst, size_t cap, size_t* got) {
  if (!gzip_) return ReadSource(fd_, &memory_, &memory_pos_, path_, dst, cap, got);
  Gzip& g = *gzip_;
  *got = 0;
  while (*got == 0) {
    if (g.z.avail_in == 0 && !g.input_done) {
      size_t n = 0;
      NT_RETURN_IF_ERROR(ReadSource(fd_, &memory_, &memory_pos_, path_,
                                    reinterpret_cast<char*>(g.in.get()), kGzipInput, &n));
      g.z.next_in = g.in.get();
      g.z.avail_in = static_cast<uInt>(n);
      g.input_done = n == 0;
    }
    if (g.z.avail_in == 0 && g.input_done) {
      gzip_cut_ = g.in_member;  // ends inside a member: the writer was cut short
      return absl::OkStatus();
    }
    if (!g.in_member) {  // another member follows (concatenated gzip files)
      if (inflateReset(&g.z) != Z_OK) return absl::UnknownError(Cat(path_, ": zlib cannot restart"));
      g.in_member = true;
    }
    g.z.next_out = reinterpret_cast<Bytef*>(dst);
    g.z.avail_out = static_cast<uInt>(std::min<size_t>(cap, 1u << 30));
    int ret = inflate(&g.z, Z_NO_FLUSH);
    *got = std::min<size_t>(cap, 1u << 30) - g.z.avail_out;
    if (ret == Z_STREAM_END) {
      g.in_member = false;
    } else if (ret == Z_MEM_ERROR) {
      throw std::bad_alloc();
    } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
      return absl::InvalidArgumentError(Cat(path_, ": corrupt gzip data at compressed byte ",
                                            g.z.total_in, " (", g.z.msg ? g.z.msg : "zlib error", ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status LineReader::Fill() {
  if (!buf_) {
    // Bytes in memory (tests, fuzzers) need no more than their size to start.
    cap_ = fd_ >= 0 ? initial_cap_ : std::clamp(memory_.size() + 1, size_t{4096}, kInitialBuffer);
    buf_.reset(new char[cap_ + kPadding]);
  }
  if (begin_ > 0) {  // keep the unfinished line at the front
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    scan_ -= begin_;
    begin_ = 0;
  }
  if (end_ == cap_) NT_RETURN_IF_ERROR(Grow(cap_ * 2));
  char* dst = buf_.get() + end_;
  size_t got = 0;
  if (!started_) {
    started_ = true;
    // At least the two magic bytes (a pipe may deliver one at a time), at
    // most one gzip input buffer, so a compressed start can move there whole.
    const size_t probe = std::min(cap_ - end_, kGzipInput);
    while (got < 2) {
      size_t n = 0;
      NT_RETURN_IF_ERROR(ReadSource(fd_, &memory_, &memory_pos_, path_, dst + got, probe - got, &n));
      if (n == 0) break;
      got += n;
    }
    if (got >= 2 && static_cast<unsigned char>(dst[0]) == 0x1f && static_cast<unsigned char>(dst[1]) == 0x8b) {
      gzip_ = std::make_unique<Gzip>();
      if (inflateInit2(&gzip_->z, 15 + 16) != Z_OK) throw std::bad_alloc();
      std::memcpy(gzip_->in.get(), dst, got);
      gzip_->z.next_in = gzip_->in.get();
      gzip_->z.avail_in = static_cast<uInt>(got);
      NT_RETURN_IF_ERROR(ReadRaw(dst, cap_ - end_, &got));
    }
  } else {
    NT_RETURN_IF_ERROR(ReadRaw(dst, cap_ - end_, &got));
  }
  if (got == 0) {
    eof_ = true;
  } else if (const void* nul = std::memchr(dst, '\0', got)) {
    const uint64_t at = offset_ + static_cast<uint64_t>(static_cast<const char*>(nul) - dst);
    return absl::InvalidArgumentError(Cat(path_, ": binary data (a NUL byte at byte ", at,
                                          gzip_ ? " after decompression" : "", "): not a text trace"));
  }
  if (offset_ == 0 && got >= 3 && std::memcmp(dst, "\xEF\xBB\xBF", 3) == 0) {
    begin_ = scan_ = end_ + 3;  // UTF-8 byte order mark
  }
  offset_ += got;
  end_ += got;
  std::memset(buf_.get() + end_, 0, kPadding);
  return absl::OkStatus();
}

absl::StatusOr<bool> LineReader::Next(Line* line) {
  while (true) {
    if (buf_) {
      char* b = buf_.get();
      if (scan_ < end_) {
        if (const void* nl = std::memchr(b + scan_, '\n', end_ - scan_)) {
          const size_t at = static_cast<size_t>(static_cast<const char*>(nl) - b);
          const size_t n = at - begin_;
          if (n > kMaxLineBytes) break;
          line->text = {b + begin_, n};
          line->terminated = true;
          line->readable = cap_ + kPadding - begin_;
          line->number = ++line_no_;
          consumed_ += n + 1;
          begin_ = scan_ = at + 1;
          return true;
        }
        scan_ = end_;
      }
      if (end_ - begin_ > kMaxLineBytes) break;
      if (eof_) {
        if (begin_ == end_) return false;
        line->text = {b + begin_, end_ - begin_};
        line->terminated = false;
        line->readable = cap_ + kPadding - begin_;
        line->number = ++line_no_;
        consumed_ += end_ - begin_;
        begin_ = scan_ = end_;
        return true;
      }
    }
    NT_RETURN_IF_ERROR(Fill());
  }
  return absl::InvalidArgumentError(Cat(path_, ":", line_no_ + 1, ": a line longer than ",
                                        kMaxLineBytes >> 20,
                                        " MiB (the reader's limit, docs/format.md): not a trace"));
}

absl::Status LineReader::ReadRest(std::string* out) {
  while (true) {
    if (buf_ && end_ > begin_) {
      out->append(buf_.get() + begin_, end_ - begin_);
      consumed_ += end_ - begin_;
      begin_ = scan_ = end_;
    }
    if (eof_) return absl::OkStatus();
    NT_RETURN_IF_ERROR(Fill());
  }
}

absl::Status LineReader::OutOfMemoryError() const {
  return absl::ResourceExhaustedError(
      Cat(path_, ": out of memory after reading ", line_no_, " lines (", consumed_ / 1000000,
          " MB) of it; the diff needs more memory than this process may use (ulimit -v, cgroup)"));
}

absl::StatusOr<std::string_view> LineReader::Peek() {
  while (!eof_ && (!buf_ || end_ - begin_ < kPeekBytes)) NT_RETURN_IF_ERROR(Fill());
  if (!buf_) return std::string_view();
  return std::string_view(buf_.get() + begin_, std::min(end_ - begin_, kPeekBytes));
}

void ReserveForSize(Trace* trace, uint64_t kernels, uint64_t buffers) {
  try {
    trace->kernels.reserve(kernels + 16);
    trace->buffers.reserve(buffers + 16);
  } catch (const std::bad_alloc&) {
    trace->kernels.shrink_to_fit();
    trace->buffers.shrink_to_fit();
  }
}

void ReleaseUnusedReserve(Trace* trace) {
  auto release = [](auto& v) {
    if (v.capacity() <= 2 * v.size() + 64) return;
    try {
      v.shrink_to_fit();
    } catch (const std::bad_alloc&) {
      // Keeping the reserve is no error: it was only a hint.
    }
  };
  release(trace->kernels);
  release(trace->buffers);
  release(trace->printed);
}

}  // namespace numtrace::analyzer
