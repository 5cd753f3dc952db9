#include "launcher/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace numtrace::launcher {

ChildResult RunChild(const std::vector<std::string>& argv, const Environment& env) {
  ChildResult result;
  if (argv.empty()) {
    result.error = "no command given";
    return result;
  }
  std::vector<std::string> env_strings = env.ToStrings();
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // exec failure travels back through a close-on-exec pipe: an errno, or EOF.
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);

  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    close(pipe_fds[0]);
    execvpe(args[0], args.data(), envp.data());
    int e = errno;
    ssize_t ignored = write(pipe_fds[1], &e, sizeof e);
    (void)ignored;
    _exit(e == ENOENT ? 127 : 126);
  }
  close(pipe_fds[1]);
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
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof exec_errno)) {
      result.error = argv[0] + ": " + std::strerror(exec_errno);
      result.exit_code = exec_errno == ENOENT ? 127 : 126;
    } else {
      result.started = true;
      result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
                         : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                               : 1;
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
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
  std::vector<std::string> env_strings = env.ToStrings();
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out_fds[2], err_fds[2];
  if (pipe2(out_fds, O_CLOEXEC) != 0) return c;
  if (pipe2(err_fds, O_CLOEXEC) != 0) {
    close(out_fds[0]);
    close(out_fds[1]);
    return c;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fds[1], 1);
    dup2(err_fds[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execvpe(args[0], args.data(), envp.data());
    dprintf(2, "%s: %s\n", args[0], std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
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
