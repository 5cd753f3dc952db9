#include "launcher/output_dir.h"

#include <filesystem>
#include <system_error>

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
  std::string s = path.string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace numtrace::launcher
