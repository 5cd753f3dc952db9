// File: launcher/child_process.h
//
// Runs a command to completion with a given environment, as the shell
// would: PATH lookup, stdin/stdout/stderr inherited, 127 for a command not
// found and 126 for one that cannot be executed. While it runs:
//   * Ctrl-C, Ctrl-\ and a hangup from the terminal reach the job directly
//     (same process group) and this process survives them, to report what
//     was captured;
//   * SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to this process alone (kill
//     PID, a batch system's timeout) are forwarded to the job and to its
//     descendants in this process group (what the terminal's signal would
//     reach: `run -- sh -c 'python train.py'` stops the python too), which
//     would otherwise run on orphaned;
//   * after such a signal, or one from the terminal, RunChild returns only
//     once those descendants have ended too, not when the job's first
//     process has;
//   * this process is the subreaper of the job's descendants, so that a
//     process that outlives the job (a daemonised worker) is seen and said.
// The job starts with the signal dispositions numtrace was started with
// (SIGPIPE included, which numtrace itself ignores to survive a closed
// stdout); a signal ignored then (nohup) stays ignored and is not forwarded.
//
// Example:
//   ChildResult r = RunChild({"python", "train.py"}, env);
//   r.exit_code   // the job's status, 128+N when killed by signal N (r.signal)
#ifndef NUMTRACE_LAUNCHER_CHILD_PROCESS_H_
#define NUMTRACE_LAUNCHER_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/environment.h"

namespace numtrace::launcher {

struct ChildResult {
  bool started = false;   // false: fork or exec failed; `error` says why
  int exit_code = 0;      // as a shell reports it: 127 not found, 126 not executable
  int signal = 0;         // the signal that killed the job, else 0
  int outliving = 0;      // descendants of the job still running when it ended
  std::string error;
};

// "was killed by signal 15 (SIGTERM)" or "exited with status 3".
std::string DescribeExit(int exit_code, int signal);

// Called once by main: the numtrace command survives a closed stdout (a
// write fails instead of SIGPIPE killing it before it passes on the job's
// status).
void IgnoreSigpipe();

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

// How a forked child starts: the one path by which the launcher makes a
// process (RunChild, RunChildCaptured, the doctor's library probe).
struct ChildStart {
  std::vector<std::string> argv;  // the command, argv[0] looked up on PATH ...
  std::vector<std::string> env;   // ... with this whole environment
  // Instead of a command: run in the forked child, its result the exit status.
  std::function<int()> body;
  // Dispositions the child sets, then the signal mask it gets (else inherited).
  std::vector<std::pair<int, void (*)(int)>> signals;
  const sigset_t* mask = nullptr;
  // Put on the child's stdout / stderr when >= 0; stdin from /dev/null if set.
  int stdout_fd = -1, stderr_fd = -1;
  bool stdin_null = false;
  // exec's errno is written there (a close-on-exec pipe: EOF means it ran);
  // else "CMD: reason" goes to the child's stderr. Either way the child
  // exits 127 (not found) or 126, as a shell.
  int exec_errno_fd = -1;
};
// Forks a child that gets SIGPIPE as numtrace was started with, then
// `start`'s dispositions, mask and descriptors, and execs (or runs `body`).
// The child's pid; -1 with errno when fork failed.
pid_t StartChild(const ChildStart& start);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_CHILD_PROCESS_H_
