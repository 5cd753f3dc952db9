#include "launcher/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/prctl.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace numtrace::launcher {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
std::atomic<pid_t> g_job{0};
// A forwarded signal the rest of the job's process tree has yet to get, and
// whether the job was sent one (forwarded, or from the terminal).
std::atomic<int> g_tree_signal{0};
std::atomic<bool> g_forwarded{false};
// SIGPIPE as numtrace was started with (ignored under some shells).
bool g_sigpipe_was_ignored = false;

// A signal sent to numtrace by a process (kill, a scheduler) goes on to the
// job at once, and to the rest of the job's processes from the waiting
// thread (walking /proc is not async-signal-safe): SignalJobTree. One the
// kernel sent (si_code > 0: Ctrl-C, a terminal hangup) went to the whole
// foreground process group, the job included: not sent twice.
void ForwardToJob(int sig, siginfo_t* info, void*) {
  g_forwarded.store(true);
  if (info != nullptr && info->si_code > 0) return;
  const pid_t pid = g_job.load();
  if (pid > 0) kill(pid, sig);
  g_tree_signal.store(sig);
}

// The live (not zombie) processes in /proc: parent and process group by pid.
struct ProcessEntry {
  pid_t ppid;
  pid_t pgrp;
};
std::map<pid_t, ProcessEntry> ReadProcesses() {
  std::map<pid_t, ProcessEntry> procs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp) || state == "Z") continue;
    procs[static_cast<pid_t>(std::stol(name))] = {static_cast<pid_t>(ppid), static_cast<pid_t>(pgrp)};
  }
  return procs;
}

// How many processes have this one as parent (0 without /proc).
int CountChildren() {
  int n = 0;
  for (const auto& [pid, p] : ReadProcesses()) n += p.ppid == getpid();
  return n;
}

// Sends `sig` to every descendant of this process that is in its process
// group, except `skip` (the job, which the handler signalled): what the
// signal would have reached had it been sent to the process group from a
// terminal. A shell job (`run -- sh -c 'python train.py; ...'`) dies of a
// TERM while its python child would run on, orphaned; a descendant that
// left the group (setsid, a daemon) is not the job's to stop.
void SignalJobTree(int sig, pid_t skip) {
  const std::map<pid_t, ProcessEntry> procs = ReadProcesses();
  const pid_t self = getpid(), group = getpgrp();
  for (const auto& [pid, p] : procs) {
    if (pid == self || pid == skip || p.pgrp != group) continue;
    pid_t up = p.ppid;
    for (int depth = 0; up > 1 && up != self && depth < 256; ++depth) {
      auto it = procs.find(up);
      up = it == procs.end() ? 0 : it->second.ppid;
    }
    if (up == self) kill(pid, sig);
  }
}

// Passes a signal forwarded while waiting on to the job's other processes.
void ForwardPendingToJobTree(pid_t skip) {
  if (const int sig = g_tree_signal.exchange(0)) SignalJobTree(sig, skip);
}

int ShellStatus(int status, int* signal) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    *signal = WTERMSIG(status);
    return 128 + *signal;
  }
  return 1;
}

}  // namespace

void IgnoreSigpipe() { g_sigpipe_was_ignored = ::signal(SIGPIPE, SIG_IGN) == SIG_IGN; }

pid_t StartChild(const ChildStart& start) {
  // Built before fork: the child only calls what is safe after it (a
  // multithreaded parent's child must not allocate).
  std::vector<char*> args, envp;
  for (const std::string& a : start.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : start.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // Dispositions before the mask: a signal pending across fork must not run
  // numtrace's handler in the child.
  ::signal(SIGPIPE, g_sigpipe_was_ignored ? SIG_IGN : SIG_DFL);
  for (const auto& [sig, handler] : start.signals) ::signal(sig, handler);
  if (start.mask != nullptr) sigprocmask(SIG_SETMASK, start.mask, nullptr);
  if (start.stdout_fd >= 0) dup2(start.stdout_fd, 1);
  if (start.stderr_fd >= 0) dup2(start.stderr_fd, 2);
  if (start.stdin_null) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
  }
  if (start.body) _exit(start.body());
  execvpe(args[0], args.data(), envp.data());
  const int e = errno;
  if (start.exec_errno_fd >= 0) {
    ssize_t ignored = write(start.exec_errno_fd, &e, sizeof e);
    (void)ignored;
  } else {
    dprintf(2, "%s: %s\n", args[0], std::strerror(e));
  }
  _exit(e == ENOENT ? 127 : 126);
}

std::string DescribeExit(int exit_code, int signal) {
  if (signal == 0) return "exited with status " + std::to_string(exit_code);
  std::string name;
  if (const char* abbrev = sigabbrev_np(signal)) name = std::string(" (SIG") + abbrev + ")";
  return "was killed by signal " + std::to_string(signal) + name;
}

ChildResult RunChild(const std::vector<std::string>& argv, const Environment& env) {
  ChildResult result;
  if (argv.empty()) {
    result.error = "no command given";
    return result;
  }
  // exec failure travels back through a close-on-exec pipe: an errno, or EOF.
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  // Orphans of the job become our children, so one that outlives it is seen.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The forwarded signals are blocked across fork, so that none arrives
  // before the job's pid is known; the handlers run once it is.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  struct sigaction forward {}, old[std::size(kForwarded)];
  forward.sa_sigaction = ForwardToJob;
  // No SA_RESTART: a forwarded signal interrupts the wait below, which then
  // passes it on to the rest of the job's processes.
  forward.sa_flags = SA_SIGINFO;
  g_tree_signal.store(0);
  g_forwarded.store(false);
  sigemptyset(&forward.sa_mask);
  bool ignored[std::size(kForwarded)] = {};
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    sigaction(kForwarded[i], nullptr, &old[i]);
    // Ignored when we started (nohup, a background job's SIGINT): the job
    // inherits that, as it would without numtrace; nothing to forward.
    ignored[i] = old[i].sa_handler == SIG_IGN;
    if (!ignored[i]) sigaction(kForwarded[i], &forward, nullptr);
  }

  // The job gets the signal handling and mask numtrace was started with.
  ChildStart start;
  start.argv = argv;
  start.env = env.ToStrings();
  start.mask = &old_mask;
  start.exec_errno_fd = pipe_fds[1];
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    start.signals.emplace_back(kForwarded[i], ignored[i] ? SIG_IGN : SIG_DFL);
  }
  pid_t pid = StartChild(start);
  close(pipe_fds[1]);
  if (pid > 0) g_job.store(pid);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) {
    close(pipe_fds[0]);
    result.error = std::string("fork: ") + std::strerror(errno);
  } else {
    int exec_errno = 0;
    ssize_t n;
    do {
      n = read(pipe_fds[0], &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    close(pipe_fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) ForwardPendingToJobTree(pid);
    g_job.store(0);  // reaped: its pid may be reused, nothing more is forwarded to it
    // The job was sent a signal: it is over only when the processes of it
    // that got the signal too are (children of this subreaper once their
    // parents died, in this process group); one forwarded now reaches them
    // too.
    if (g_forwarded.load()) {
      ForwardPendingToJobTree(0);
      while (waitpid(-getpgrp(), nullptr, 0) > 0 || errno == EINTR) ForwardPendingToJobTree(0);
    }
    if (n == static_cast<ssize_t>(sizeof exec_errno)) {
      result.error = argv[0] + ": " + std::strerror(exec_errno);
      result.exit_code = exec_errno == ENOENT ? 127 : 126;
    } else {
      result.started = true;
      result.exit_code = ShellStatus(status, &result.signal);
      // Reap orphans that already ended; count those still running.
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      result.outliving = CountChildren();
    }
  }
  g_job.store(0);
  for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &old[i], nullptr);
  return result;
}

}  // namespace numtrace::launcher

namespace numtrace::launcher {

CapturedChild RunChildCaptured(const std::vector<std::string>& argv, const Environment& env,
                               int timeout_s) {
  CapturedChild c;
  if (argv.empty()) {
    c.result.error = "no command given";
    return c;
  }
  int out_fds[2], err_fds[2];
  if (pipe2(out_fds, O_CLOEXEC) != 0) return c;
  if (pipe2(err_fds, O_CLOEXEC) != 0) {
    close(out_fds[0]);
    close(out_fds[1]);
    return c;
  }
  ChildStart start;
  start.argv = argv;
  start.env = env.ToStrings();
  start.stdout_fd = out_fds[1];
  start.stderr_fd = err_fds[1];
  start.stdin_null = true;
  pid_t pid = StartChild(start);
  close(out_fds[1]);
  close(err_fds[1]);
  if (pid < 0) {
    close(out_fds[0]);
    close(err_fds[0]);
    c.result.error = std::string("fork: ") + std::strerror(errno);
    return c;
  }
  c.result.started = true;
  const time_t deadline = time(nullptr) + timeout_s;
  struct pollfd fds[2] = {{out_fds[0], POLLIN, 0}, {err_fds[0], POLLIN, 0}};
  std::string* sinks[2] = {&c.out, &c.err};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    int left_ms = static_cast<int>(deadline - time(nullptr)) * 1000;
    if (left_ms <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    int n = poll(fds, 2, left_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        if (sinks[i]->size() < (1u << 20)) sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.result.exit_code = killed ? 124
                       : WIFEXITED(status) ? WEXITSTATUS(status)
                       : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                             : 1;
  return c;
}

}  // namespace numtrace::launcher
