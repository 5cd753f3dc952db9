#include "analyzer/read/file_contents.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

absl::Status ErrnoStatus(int err, const std::string& path, std::string_view what) {
  std::string msg = Cat(path, ": cannot ", what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT: case ENOTDIR: return absl::NotFoundError(msg);
    case EACCES: case EPERM: return absl::PermissionDeniedError(msg);
    default: return absl::UnknownError(msg);
  }
}

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() { if (fd >= 0) ::close(fd); }
};

}  // namespace

FileContents::FileContents(FileContents&& other) noexcept { *this = std::move(other); }

FileContents& FileContents::operator=(FileContents&& other) noexcept {
  if (this == &other) return *this;
  Release();
  copy_ = std::move(other.copy_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  mapping_size_ = std::exchange(other.mapping_size_, 0);
  dropped_ = std::exchange(other.dropped_, 0);
  populated_ = std::exchange(other.populated_, 0);
  next_check_ = std::exchange(other.next_check_, 0);
  size_ = std::exchange(other.size_, 0);
  // A moved padded_string keeps its heap buffer, so data_ stays valid.
  data_ = mapping_ ? static_cast<const char*>(mapping_) : (copy_.data() ? copy_.data() : "");
  other.data_ = "";
  return *this;
}

FileContents::~FileContents() { Release(); }

void FileContents::Advance(size_t pos) const {
  char* base = static_cast<char*>(mapping_);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Behind: whole pages below `pos`. MADV_DONTNEED on a private read-only
  // file mapping only drops this process's page table entries.
  const size_t behind = pos / page * page;
  if (behind > dropped_) {
    ::madvise(base + dropped_, behind - dropped_, MADV_DONTNEED);
    dropped_ = behind;
  }
  // Ahead: keep at least one window mapped past `pos`, in one call per
  // window rather than a page fault per 64 KB.
  if (populated_ < size_ && populated_ < pos + kWindow) {
    const size_t from = std::max(populated_, behind);
    const size_t to = std::min((pos + 2 * kWindow) / page * page, (size_ + page - 1) / page * page);
    if (to > from) {
#ifdef MADV_POPULATE_READ
      if (::madvise(base + from, to - from, MADV_POPULATE_READ) != 0)
#endif
        ::madvise(base + from, to - from, MADV_WILLNEED);
    }
    populated_ = std::max(populated_, to);
  }
  next_check_ = pos + kWindow / 2;
}

void FileContents::Release() {
  if (mapping_) ::munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
  mapping_size_ = 0;
}

FileContents FileContents::Copy(std::string_view bytes) {
  FileContents f;
  f.copy_ = simdjson::padded_string(bytes.data(), bytes.size());
  f.data_ = f.copy_.data() ? f.copy_.data() : "";
  f.size_ = bytes.size();
  return f;
}

absl::StatusOr<FileContents> FileContents::Load(const std::string& path) {
  Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) return ErrnoStatus(errno, path, "open");
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) return ErrnoStatus(errno, path, "stat");
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(Cat(path, ": is a directory, not a trace file"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (S_ISREG(st.st_mode) && size > 0) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t total = (size + simdjson::SIMDJSON_PADDING + page - 1) / page * page;
    void* base = ::mmap(nullptr, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base != MAP_FAILED) {
      // The file over the start of the zeroed reservation: the tail of its
      // last page and the pages after it read as zeros (the padding).
      void* file = ::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd.fd, 0);
      if (file == base) {
        FileContents f;
        f.mapping_ = base;
        f.mapping_size_ = total;
        f.data_ = static_cast<const char*>(base);
        f.size_ = size;
        f.ReadingAt(0);  // the first window
        return f;
      }
      ::munmap(base, total);
    }
  }
  // Not mappable (a pipe, a /proc file, an empty file): read it.
  std::string bytes;
  if (size > 0) bytes.reserve(size);
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, path, "read");
    if (n == 0) break;
    bytes.append(chunk, static_cast<size_t>(n));
  }
  return Copy(bytes);
}

}  // namespace numtrace::analyzer
