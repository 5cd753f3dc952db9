// File: test/util/kernel_names.h
//
// The real kernel-name lists of test/data/kernel-names (see the README there
// for what each file is and where the names came from), read by every test
// through this one loader. A missing or unreadable file throws, so the test
// that needs it fails with the path in its message (GoogleTest reports the
// exception) instead of crashing on an empty list; tests never reach outside
// the repository for their data.
//
// Example:
//   std::vector<std::string> names = LoadKernelNames("5_nccl_kernels.txt");
//   // one name per non-comment line: the last tab-separated field
#ifndef NUMTRACE_TEST_UTIL_KERNEL_NAMES_H_
#define NUMTRACE_TEST_UTIL_KERNEL_NAMES_H_

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include "test/util/test_paths.h"

namespace numtrace::testing {

// The folder holding the lists (NUMTRACE_TEST_DATA_DIR comes from
// cmake/testing.cmake).
inline std::string KernelNamesDir() { return std::string(NUMTRACE_TEST_DATA_DIR) + "/kernel-names"; }

// The names of one list: the last tab-separated field of every line that is
// neither empty nor a `#` comment (the step files 6a-6c carry idx, stream and
// times before the name). Throws std::runtime_error naming the path when the
// file cannot be read or holds no name.
inline std::vector<std::string> LoadKernelNames(std::string_view file) {
  const std::string path = KernelNamesDir() + "/" + std::string(file);
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read kernel-name list " + path + ": " + std::strerror(errno) +
                             " (see test/data/kernel-names/README.md)");
  }
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.rfind('\t');
    names.push_back(tab == std::string::npos ? line : line.substr(tab + 1));
  }
  if (names.empty()) throw std::runtime_error("kernel-name list " + path + " holds no name");
  return names;
}

}  // namespace numtrace::testing

#endif  // NUMTRACE_TEST_UTIL_KERNEL_NAMES_H_
