// File: analyzer/cli/main.cc
//
// numtrace-diff: find the first kernel where two runs' numerics part.
// Everything but the process plumbing lives in diff_command.cc.
//
// Example:
//   numtrace-diff runA/ runB/ --json summary.json -o report.html
#include <unistd.h>

#include <iostream>

#include "analyzer/cli/diff_command.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return numtrace::analyzer::DiffMain(argc, argv, std::cout, std::cerr, isatty(STDOUT_FILENO) == 1);
}
