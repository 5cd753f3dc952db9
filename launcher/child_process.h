// File: launcher/child_process.h
//
// Runs a command to completion with a given environment, as the shell
// would: PATH lookup, stdin/stdout/stderr inherited. While it runs, Ctrl-C
// and Ctrl-\ reach the job (same process group) and not this process, so the
// launcher survives to report what was captured.
//
// Example:
//   ChildResult r = RunChild({"python", "train.py"}, env);
//   r.exit_code   // the job's status, 128+N when killed by signal N
#ifndef NUMTRACE_LAUNCHER_CHILD_PROCESS_H_
#define NUMTRACE_LAUNCHER_CHILD_PROCESS_H_

#include <string>
#include <vector>

#include "launcher/environment.h"

namespace numtrace::launcher {

struct ChildResult {
  bool started = false;   // false: fork or exec failed; `error` says why
  int exit_code = 0;      // as a shell reports it: 127 not found, 126 not executable
  std::string error;
};

ChildResult RunChild(const std::vector<std::string>& argv, const Environment& env);

// Same, with stdout and stderr captured (each up to 1 MiB) and a deadline:
// after `timeout_s` seconds the child is killed (exit_code 124, as
// timeout(1)). For short probes (doctor), not for jobs.
struct CapturedChild {
  ChildResult result;
  std::string out, err;
};
CapturedChild RunChildCaptured(const std::vector<std::string>& argv, const Environment& env,
                               int timeout_s);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_CHILD_PROCESS_H_
