#include "analyzer/read/file_contents.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

absl::StatusOr<simdjson::padded_string> LoadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, path, "open");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus(err, path, "stat");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(Cat(path, ": is a directory, not a trace file"));
  }
  // One read(2) loop into the final buffer: no second copy of a 240 MB file.
  simdjson::padded_string data(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, path, "read");
    }
    if (n == 0) break;  // the file shrank while we read it: keep what is there
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got < data.size()) {
    simdjson::padded_string shorter(data.data(), got);
    return shorter;
  }
  return data;
}

}  // namespace numtrace::analyzer
