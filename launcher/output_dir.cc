#include "launcher/output_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "analyzer/read/importer.h"

namespace numtrace::launcher {

namespace fs = std::filesystem;

absl::StatusOr<std::string> PrepareOutputDir(const std::string& dir, bool force) {
  if (dir.empty()) return absl::InvalidArgumentError("no output directory given (-o DIR)");
  std::error_code ec;
  fs::path path = fs::absolute(dir, ec).lexically_normal();
  if (ec) return absl::InvalidArgumentError(dir + ": " + ec.message());
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) return absl::InvalidArgumentError(dir + ": exists and is not a directory");
    if (!fs::is_empty(path, ec) && !force) {
      return absl::AlreadyExistsError(dir + ": directory exists and is not empty (use a fresh one, or --force)");
    }
  } else if (!fs::create_directories(path, ec) || ec) {
    return absl::PermissionDeniedError(dir + ": cannot create directory: " + ec.message());
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(dir + ": the job could not write its traces there: " +
                                       std::strerror(errno));
  }
  std::string s = path.string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

absl::Status CheckHooksLog(const std::string& log, const std::string& output_dir) {
  auto refuse = [&](std::string_view why) {
    return absl::InvalidArgumentError("--hooks-log " + log + ": " + std::string(why));
  };
  const fs::path path = fs::path(log).lexically_normal();
  fs::path dir = fs::path(output_dir).lexically_normal();
  if (dir.has_parent_path() && dir.filename().empty()) dir = dir.parent_path();  // "run/" -> "run"
  // Inside the run's directory: it could take a trace's name, and diff reads every file there.
  const auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  if (d == dir.end()) return refuse("is inside the run's output directory, where the traces go");
  if (analyzer::ParseTraceFileName(log)) return refuse("is named as a trace; name the log otherwise");
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return refuse("is a symbolic link (an output is never written through one)");
    if (!S_ISREG(st.st_mode)) return refuse("exists and is not a regular file");
    // A trace (plain or gzip'd) must never be appended to.
    char head[16] = {};
    ssize_t n = -1;
    if (const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); fd >= 0) {
      n = read(fd, head, sizeof head);
      close(fd);
    }
    const std::string_view h(head, n > 0 ? static_cast<size_t>(n) : 0);
    if (h.starts_with("{\"type\":\"header\"") || h.starts_with("\x1f\x8b")) {
      return refuse("is a numtrace trace (or compressed): the log would be appended into it");
    }
    if (access(path.c_str(), W_OK) != 0) return refuse(std::string("cannot be written: ") + std::strerror(errno));
    return absl::OkStatus();
  }
  const fs::path parent = path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) return refuse("its directory does not exist");
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    return refuse(std::string("its directory is not writable: ") + std::strerror(errno));
  }
  return absl::OkStatus();
}

}  // namespace numtrace::launcher
