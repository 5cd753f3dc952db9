#include "launcher/install_layout.h"

#include <filesystem>
#include <system_error>

namespace numtrace::launcher {

namespace fs = std::filesystem;

InstallLayout LayoutFromBinDir(const std::string& bin_dir, const Environment& env) {
  InstallLayout layout;
  layout.bin_dir = bin_dir;
  const fs::path prefix = fs::path(bin_dir).parent_path();
  layout.library = (prefix / "lib" / "libnumtrace.so").string();
  layout.hooks_dir = (prefix / "share" / "numtrace" / "hooks").string();
  if (const std::string* lib = env.Find("NUMTRACE_LIB"); lib != nullptr && !lib->empty()) {
    // The preload must name the library by absolute path: the job may cd.
    std::error_code ec;
    fs::path absolute = fs::absolute(*lib, ec);
    layout.library = ec ? *lib : absolute.lexically_normal().string();
  }
  return layout;
}

InstallLayout FindInstallLayout(const Environment& env) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::string bin_dir = ec ? std::string(".") : exe.parent_path().string();
  return LayoutFromBinDir(bin_dir, env);
}

}  // namespace numtrace::launcher
