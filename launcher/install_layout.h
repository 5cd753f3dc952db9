// File: launcher/install_layout.h
//
// Where the numtrace command finds its parts: always relative to its own
// executable, so an installed tree (or a build tree) can be moved or copied
// to another machine. Both trees have the same shape:
//
//   <prefix>/bin/numtrace
//   <prefix>/lib/libnumtrace.so
//   <prefix>/share/numtrace/hooks/sitecustomize.py
//
// (the build copies the hooks to build/share/numtrace/hooks). $NUMTRACE_LIB
// overrides the library, as it did for scripts/numtrace.
//
// Example:
//   InstallLayout l = FindInstallLayout(EnvironmentFromProcess());
//   l.library   // "/opt/numtrace/lib/libnumtrace.so"
#ifndef NUMTRACE_LAUNCHER_INSTALL_LAYOUT_H_
#define NUMTRACE_LAUNCHER_INSTALL_LAYOUT_H_

#include <string>

#include "launcher/environment.h"

namespace numtrace::launcher {

struct InstallLayout {
  std::string bin_dir;    // directory of the numtrace executable
  std::string library;    // absolute path of libnumtrace.so (may not exist)
  std::string hooks_dir;  // folder holding the PyTorch hooks' sitecustomize.py
};

// The layout around `bin_dir` (absolute), with $NUMTRACE_LIB applied.
InstallLayout LayoutFromBinDir(const std::string& bin_dir, const Environment& env);

// The layout around the running executable (/proc/self/exe).
InstallLayout FindInstallLayout(const Environment& env);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_INSTALL_LAYOUT_H_
