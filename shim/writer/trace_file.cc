#include "shim/writer/trace_file.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace numtrace::shim {
namespace {

bool MakeDirs(const std::string& dir, std::string* error) {
  std::string partial;
  size_t pos = 0;
  while (pos <= dir.size()) {
    size_t next = dir.find('/', pos);
    if (next == std::string::npos) next = dir.size();
    partial = dir.substr(0, next);
    pos = next + 1;
    if (partial.empty() || partial == "." || partial == "..") continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = "cannot create output directory " + partial + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "output path " + dir + " is not a directory";
    return false;
  }
  return true;
}

int OpenExclusive(const std::string& path) {
  return open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

int64_t RankFromEnv(const std::function<const char*(const char*)>& getenv) {
  for (const char* name : {"RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"}) {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') continue;
    int64_t rank = 0;
    const char* end = v + std::strlen(v);
    auto r = std::from_chars(v, end, rank);
    if (r.ec == std::errc() && r.ptr == end && rank >= 0) return rank;
  }
  return 0;
}

int CreateTraceFile(const std::string& dir, int64_t rank, int64_t pid, std::string* path,
                    std::string* error) {
  if (!MakeDirs(dir, error)) return -1;
  const std::string base = dir + "/rank_" + std::to_string(rank);
  // The plain name first; then the pid; then a counter, in case an earlier
  // run left a file under this pid in the same directory.
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = base;
    if (attempt >= 1) candidate += ".pid" + std::to_string(pid);
    if (attempt >= 2) candidate += "." + std::to_string(attempt - 1);
    candidate += ".ntrace.jsonl";
    const int fd = OpenExclusive(candidate);
    if (fd >= 0) {
      *path = candidate;
      return fd;
    }
    if (errno != EEXIST) {
      *error = "cannot create trace file " + candidate + ": " + std::strerror(errno);
      return -1;
    }
  }
  *error = "cannot find a free trace file name beside " + base + ".ntrace.jsonl";
  return -1;
}

std::string UtcNowRfc3339() {
  const time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace numtrace::shim
