#include "common/io/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>


namespace numtrace {
namespace {

// Message text from pieces (this Abseil's StrCat takes no std::string_view).
template <typename... T>
std::string Cat(const T&... pieces) {
  std::string out;
  (out.append(std::string_view(pieces)), ...);
  return out;
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string ByteCount(uint64_t bytes) {
  char buf[48];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < (uint64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  }
  return buf;
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, std::string_view what,
                                            uint64_t max_bytes) {
  // O_NONBLOCK: opening a fifo without a writer returns at once (and the
  // fstat below refuses it); for a regular file the flag changes nothing.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    switch (err) {
      case ENOENT: return absl::NotFoundError(Cat(path, ": ", what, ": no such file"));
      case EACCES: case EPERM: return absl::PermissionDeniedError(Cat(path, ": ", what, ": permission denied"));
      case ELOOP: return absl::InvalidArgumentError(Cat(path, ": ", what, ": a symlink loop"));
      case ENXIO:  // a socket, or a fifo opened for writing: not a file
        return absl::InvalidArgumentError(Cat(path, ": ", what, " is not a regular file (refused)"));
      default: return absl::UnavailableError(Cat(path, ": ", what, ": cannot open: ", std::strerror(err)));
    }
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return absl::UnavailableError(Cat(path, ": ", what, ": cannot stat: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        Cat(path, ": ", what, " is ", KindOf(st.st_mode), ", not a regular file (refused: it could be read without end)"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return absl::InvalidArgumentError(Cat(path, ": ", what, " is ", ByteCount(size), ", more than the ",
                                          ByteCount(max_bytes), " such a file may have (refused)"));
  }
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(Cat(path, ": out of memory reading ", what, " (", ByteCount(size),
                                            "); it needs more memory than this process may use"));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return absl::UnavailableError(Cat(path, ": ", what, ": cannot read: ", std::strerror(errno)));
    if (n == 0) break;  // shrank meanwhile: what is there
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace numtrace
