#include "analyzer/cli/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace numtrace::analyzer {

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  auto fail = [&](const char* what) {
    std::string msg = path + ": cannot " + what + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return absl::UnavailableError(msg);
  };
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(path + ": cannot write: " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      close(fd);
      return fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return fail("write");
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail("rename into place");
  return absl::OkStatus();
}

}  // namespace numtrace::analyzer
