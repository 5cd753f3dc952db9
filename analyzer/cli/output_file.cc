#include "analyzer/cli/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "analyzer/read/importer.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> IdOf(const std::string& path, struct stat* st_out = nullptr) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (st_out) *st_out = st;
  return FileId{st.st_dev, st.st_ino};
}

std::string Errno(int err) { return std::strerror(err); }

std::string ParentOf(const std::string& path) {
  std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// What the inputs are, by identity: files that must not be written, and
// directories into which no trace file may be added.
struct InputSet {
  std::vector<std::pair<FileId, std::string>> files;
  std::vector<std::pair<FileId, std::string>> dirs;
};

InputSet CollectInputs(const std::vector<std::string>& inputs) {
  InputSet set;
  for (const std::string& in : inputs) {
    if (in.empty()) continue;
    struct stat st;
    std::optional<FileId> id = IdOf(in, &st);
    if (!id) continue;  // missing inputs are reported by the reader
    if (!S_ISDIR(st.st_mode)) {
      set.files.emplace_back(*id, in);
      continue;
    }
    set.dirs.emplace_back(*id, in);
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(in, ec)) {
      if (!ParseTraceFileName(e.path().filename().string())) continue;
      if (std::optional<FileId> f = IdOf(e.path().string())) set.files.emplace_back(*f, e.path().string());
    }
  }
  return set;
}

// The identity of an output for comparing two outputs: the file when it
// exists, else its directory and name.
std::pair<std::optional<FileId>, std::string> OutputKey(const std::string& path) {
  if (std::optional<FileId> id = IdOf(path)) return {id, ""};
  return {IdOf(ParentOf(path)), fs::path(path).filename().string()};
}

// SIGINT / SIGTERM cleanup: the one temporary file that exists now.
char g_temp_path[PATH_MAX];
volatile sig_atomic_t g_temp_live = 0;
struct sigaction g_old_int, g_old_term;
bool g_installed_int = false, g_installed_term = false;

void RemoveTempAndDie(int sig) {
  if (g_temp_live) ::unlink(g_temp_path);
  g_temp_live = 0;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void InstallCleanup() {
  struct sigaction sa {};
  sa.sa_handler = RemoveTempAndDie;
  sigemptyset(&sa.sa_mask);
  // A signal the caller ignores (nohup) stays ignored.
  struct sigaction cur {};
  ::sigaction(SIGINT, nullptr, &cur);
  if ((g_installed_int = cur.sa_handler != SIG_IGN)) ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, nullptr, &cur);
  if ((g_installed_term = cur.sa_handler != SIG_IGN)) ::sigaction(SIGTERM, &sa, &g_old_term);
}

void RestoreSignals() {
  if (g_installed_int) ::sigaction(SIGINT, &g_old_int, nullptr);
  if (g_installed_term) ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed_int = g_installed_term = false;
}

// Signals held while the global temp path changes, so the handler never
// sees half a name.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// Moves `from` to `to` unless `to` exists (atomically).
int RenameNoReplace(const char* from, const char* to) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return -1;
#endif
  // Filesystems without RENAME_NOREPLACE: link(2) fails with EEXIST too.
  if (::link(from, to) != 0) return -1;
  ::unlink(from);
  return 0;
}

}  // namespace

absl::Status CheckOutputs(const std::vector<OutputSpec>& outputs,
                          const std::vector<std::string>& inputs, bool force) {
  const InputSet in = CollectInputs(inputs);
  std::vector<const OutputSpec*> seen;
  for (const OutputSpec& o : outputs) {
    if (o.path.empty()) continue;
    for (const OutputSpec* prev : seen) {
      bool same = o.path == prev->path;
      if (!same && o.path != kStdoutPath && prev->path != kStdoutPath) {
        auto x = OutputKey(o.path), y = OutputKey(prev->path);
        same = x.first && y.first && *x.first == *y.first && x.second == y.second;
      }
      if (same) {
        return absl::InvalidArgumentError(
            o.path + ": " + prev->flag + " and " + o.flag + " name the same output");
      }
    }
    seen.push_back(&o);
    if (o.path == kStdoutPath) continue;

    struct stat lst;
    const bool exists = ::lstat(o.path.c_str(), &lst) == 0;
    struct stat st;
    std::optional<FileId> id = IdOf(o.path, &st);
    if (id) {
      for (const auto& [file, name] : in.files) {
        if (file == *id) {
          return absl::InvalidArgumentError(o.path + ": " + o.flag + " would overwrite the input " +
                                            name + " (refused, also with --force)");
        }
      }
      if (!S_ISREG(st.st_mode)) {
        return absl::InvalidArgumentError(
            o.path + ": " + o.flag + " names an existing " +
            (S_ISDIR(st.st_mode) ? "directory" : "file that is not a regular file") +
            " (refused, also with --force)");
      }
    }
    if (exists && S_ISLNK(lst.st_mode)) {
      // Never written through: the link could lead onto a trace or any
      // file of the user's (output_file.h).
      std::error_code ec;
      const std::string to = fs::read_symlink(o.path, ec).string();
      return absl::InvalidArgumentError(o.path + ": " + o.flag + " names a symbolic link" +
                                        (to.empty() ? "" : " (to " + to + ")") +
                                        "; refused, also with --force (name the file itself)");
    }
    const std::string parent = ParentOf(o.path);
    struct stat pst;
    if (::stat(parent.c_str(), &pst) != 0 || !S_ISDIR(pst.st_mode)) {
      return absl::InvalidArgumentError(o.path + ": output directory " + parent + " does not exist");
    }
    if (!id && ParseTraceFileName(fs::path(o.path).filename().string())) {
      for (const auto& [dir, name] : in.dirs) {
        if (dir == FileId{pst.st_dev, pst.st_ino}) {
          return absl::InvalidArgumentError(o.path + ": " + o.flag +
                                            " would add a trace file to the input directory " + name +
                                            " (refused, also with --force)");
        }
      }
    }
    if (exists && !force) {
      return absl::InvalidArgumentError(o.path + ": output file exists (use --force to overwrite)");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TempOutput> TempOutput::Create(const std::string& target) {
  std::string name = fs::path(target).filename().string();
  std::string tmp = (fs::path(ParentOf(target)) / ("." + name + ".tmp.XXXXXX")).string();
  if (tmp.size() >= PATH_MAX) return absl::InvalidArgumentError(target + ": path too long");
  BlockSignals hold;
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(target + ": cannot create a temporary file in " +
                                  ParentOf(target) + ": " + Errno(errno));
  }
  ::fchmod(fd, 0644 & ~[] { mode_t m = ::umask(0); ::umask(m); return m; }());
  std::memcpy(g_temp_path, tmp.c_str(), tmp.size() + 1);
  g_temp_live = 1;
  InstallCleanup();
  return TempOutput(target, std::move(tmp), fd);
}

TempOutput::TempOutput(TempOutput&& other) noexcept
    : target_(std::move(other.target_)), tmp_(std::move(other.tmp_)), fd_(std::exchange(other.fd_, -1)) {
  other.tmp_.clear();
}

TempOutput::~TempOutput() { Discard(); }

void TempOutput::Discard() {
  if (tmp_.empty()) return;
  BlockSignals hold;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  tmp_.clear();
  g_temp_live = 0;
  RestoreSignals();
}

absl::Status TempOutput::Write(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      Discard();
      return absl::UnavailableError(target_ + ": cannot write: " + Errno(err));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status TempOutput::Commit(bool replace) {
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {  // NFS and others report ENOSPC / EIO only here
    const int err = errno;
    Discard();
    return absl::UnavailableError(target_ + ": cannot write: " + Errno(err));
  }
  BlockSignals hold;
  if (replace) {
    struct stat st;
    if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      Discard();
      return absl::FailedPreconditionError(target_ + ": became something other than a regular file "
                                           "during the run; not replaced");
    }
    if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
      const int err = errno;
      Discard();
      return absl::UnavailableError(target_ + ": cannot move into place: " + Errno(err));
    }
  } else if (RenameNoReplace(tmp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    Discard();
    if (err == EEXIST) {
      return absl::AlreadyExistsError(target_ + ": appeared during the run; not replaced "
                                      "(use --force to overwrite)");
    }
    return absl::UnavailableError(target_ + ": cannot move into place: " + Errno(err));
  }
  tmp_.clear();
  g_temp_live = 0;
  RestoreSignals();
  return absl::OkStatus();
}

absl::Status WriteOutput(const std::string& path, std::string_view contents, bool force,
                         std::ostream& out) {
  if (path == kStdoutPath) {
    out << contents;
    out.flush();
    if (!out) return absl::UnavailableError("standard output: cannot write");
    return absl::OkStatus();
  }
  // A symbolic link is refused by CheckOutputs, and one that appears during
  // the run is caught in Commit (lstat): rename(2) never follows it.
  NT_ASSIGN_OR_RETURN(TempOutput tmp, TempOutput::Create(path));
  NT_RETURN_IF_ERROR(tmp.Write(contents));
  return tmp.Commit(force);
}

}  // namespace numtrace::analyzer
