#include "launcher/run_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include "CLI/CLI.hpp"
#include "analyzer/report/dump_commands.h"
#include "common/status/status_macros.h"
#include "launcher/child_process.h"
#include "launcher/dump_from_summary.h"
#include "launcher/output_dir.h"
#include "launcher/rank_listing.h"
#include "launcher/run_environment.h"
#include "common/settings/settings.h"

namespace numtrace::launcher {

namespace {

namespace fs = std::filesystem;

// Path settings (--dump-dir, --cupti-lib) are resolved against numtrace's
// working directory, not wherever the job `cd`s before CUDA starts.
RunOptions WithAbsolutePaths(const RunOptions& options) {
  RunOptions o = options;
  for (auto& [variable, value] : o.settings) {
    const settings::Setting* s = settings::FindSetting(variable);
    if (s == nullptr || s->kind != settings::SettingKind::kPath || value.empty()) continue;
    std::error_code ec;
    fs::path abs = fs::absolute(value, ec);
    if (!ec) value = abs.lexically_normal().string();
  }
  return o;
}

// The job's command line as one shell-quoted string (environment
// job.command): pasted into a shell it runs the same argv, byte for byte.
std::string JobCommand(const std::vector<std::string>& command) {
  std::string line;
  for (const std::string& arg : command) line += (line.empty() ? "" : " ") + analyzer::ShellQuote(arg);
  return line;
}

// A private directory (NUMTRACE_RUN_STATE) where each process of the job
// that starts CUDA leaves an empty file named by its pid
// (Runtime::NoteCudaStarted), removed with everything in it when the run
// ends. Count() says how many processes started CUDA, or nothing when the
// directory could not be made or read (the listing then says what it does
// not know).
class CudaStartMarks {
 public:
  CudaStartMarks() {
    std::error_code ec;
    std::string tmpl = (fs::temp_directory_path(ec) / "numtrace-run-XXXXXX").string();
    if (!ec && mkdtemp(tmpl.data()) != nullptr) dir_ = tmpl;
  }
  ~CudaStartMarks() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  CudaStartMarks(const CudaStartMarks&) = delete;
  CudaStartMarks& operator=(const CudaStartMarks&) = delete;

  const std::string& dir() const { return dir_; }
  std::optional<int> Count() const {
    if (dir_.empty()) return std::nullopt;
    std::error_code ec;
    int n = 0;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) ++n;
    if (ec) return std::nullopt;
    return n;
  }

 private:
  std::string dir_;
};

// The environment's job.git (docs/format.md): the commit of the git work
// tree the job runs in, "+dirty" when tracked files changed; empty outside
// a work tree or without git. Asked once here, never by the shim (which
// must not start processes inside the job).

std::string JobGitRevision(const Environment& env) {
  CapturedChild head = RunChildCaptured({"git", "rev-parse", "HEAD"}, env, 10);
  if (!head.result.started || head.result.exit_code != 0) return {};
  std::string rev = head.out.substr(0, head.out.find_first_of("\r\n"));
  if (rev.empty()) return {};
  CapturedChild status = RunChildCaptured({"git", "status", "--porcelain", "--untracked-files=no"}, env, 10);
  if (status.result.started && status.result.exit_code == 0 && !status.out.empty()) rev += "+dirty";
  return rev;
}

}  // namespace

absl::Status CheckJobSettings(const RunOptions& options, const CommandContext& ctx,
                              std::vector<std::string>* warnings) {
  const RunOptions o = WithAbsolutePaths(options);
  std::error_code ec;
  const std::string dir = fs::absolute(options.output_dir().empty() ? "." : options.output_dir(), ec).string();
  Environment env = RunEnvironment(o, dir, ctx.env, ctx.layout, warnings);
  return ValidateJobSettings(env, o, warnings);
}

absl::StatusOr<CaptureOutcome> CaptureJob(const RunOptions& options, const CommandContext& ctx) {
  if (access(ctx.layout.library.c_str(), R_OK) != 0) {
    return absl::NotFoundError(ctx.layout.library +
                               ": libnumtrace.so not found beside this numtrace (reinstall, or set "
                               "NUMTRACE_LIB)");
  }
  // Nothing is created nor started before every setting has been judged.
  std::vector<std::string> warnings;
  NT_RETURN_IF_ERROR(CheckJobSettings(options, ctx, &warnings));
  // The hooks log, from the option or the environment, as the job will see it.
  {
    const RunOptions absolute = WithAbsolutePaths(options);
    std::string log = absolute.Get("NUMTRACE_HOOKS_LOG");
    if (log.empty()) {
      std::error_code ec;
      const std::string from_env = ctx.env.Get("NUMTRACE_HOOKS_LOG");
      if (!from_env.empty()) log = fs::absolute(from_env, ec).lexically_normal().string();
    }
    std::error_code ec;
    const std::string out_dir = fs::absolute(options.output_dir(), ec).lexically_normal().string();
    if (!log.empty()) {
      NT_RETURN_IF_ERROR(CheckHooksLog(log, out_dir));
    }
  }
  absl::StatusOr<std::string> dir = PrepareOutputDir(options.output_dir(), options.force);
  if (!dir.ok()) return dir.status();
  std::vector<std::string> unused;
  Environment env = RunEnvironment(WithAbsolutePaths(options), *dir, ctx.env, ctx.layout, &unused);
  if (env.Find("NUMTRACE_JOB_GIT") == nullptr) {
    if (std::string rev = JobGitRevision(ctx.env); !rev.empty()) env.Set("NUMTRACE_JOB_GIT", rev);
  }
  // The command as started here (a launcher's, with every rank), not the
  // worker's argv the shim sees: what the diff's re-capture commands re-run.
  env.Set("NUMTRACE_JOB_COMMAND", JobCommand(options.command));
  // --force into a used directory: the listing names this run's traces only.
  const std::set<std::string> earlier = TraceFilesIn(*dir);
  CudaStartMarks cuda_marks;
  if (!cuda_marks.dir().empty()) env.Set("NUMTRACE_RUN_STATE", cuda_marks.dir());
  for (const std::string& w : warnings) WarnLine(ctx, "run", w);
  ctx.out.flush();
  ctx.err.flush();
  ChildResult child = RunChild(options.command, env);
  CaptureOutcome outcome;
  outcome.dir = *dir;
  outcome.exit_code = child.exit_code;
  if (!child.started) {
    // As a shell: 127 not found, 126 found but not executable; else (fork
    // failed) an error of numtrace's own.
    if (child.exit_code != 126 && child.exit_code != 127) return absl::InternalError(child.error);
    outcome.started = false;
    outcome.error = child.error;
    return outcome;
  }
  outcome.signal = child.signal;
  // numtrace's own lines go to stderr: the job's stdout is the job's.
  if (child.exit_code != 0) ctx.err << "numtrace run: the job " << DescribeExit(child.exit_code, child.signal) << "\n";
  if (child.outliving > 0) {
    ctx.err << "numtrace run: " << child.outliving << " process" << (child.outliving == 1 ? "" : "es")
            << " of the job still running after it ended; their traces may still be written in " << *dir
            << " (numtrace show " << *dir << " once they end)\n";
  }
  outcome.traces = ListRankTraces(*dir, ctx.err, earlier, OpsLevel(env), cuda_marks.Count());
  if (outcome.traces > 0) {
    if (std::string line = AllocatorLineForCudaJob(env, options); !line.empty()) WarnLine(ctx, "run", line);
  }
  ctx.err.flush();
  return outcome;
}

int RunCommandMain(const std::vector<std::string>& args, const CommandContext& ctx) {
  RunOptions options;
  CLI::App app{"numtrace run: capture a job's kernels with libnumtrace.so loaded"};
  app.name("numtrace run");
  AddRunOptions(&app, &options);
  app.footer(R"(Usage: numtrace run -o DIR [options] [--] CMD ARGS...
Everything from CMD on is the job's (numtrace's options go before it).

The library is loaded by absolute path (LD_PRELOAD, or with --injection
CUDA_INJECTION64_PATH); the PyTorch hooks (a step mark after every
optimizer.step(), Triton dtypes, each tensor from PyTorch's own allocator)
go on PYTHONPATH when CMD looks like Python. The allocator is left as it is
(--allocator async sets PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync when
unset); one line says which mode a Python job gets.
Every setting is checked before the job starts (a bad one: one line, exit 2).
numtrace's own lines go to stderr; SIGINT, SIGQUIT, SIGTERM and SIGHUP sent
to it are passed to the job; it exits with the job's status (128+N: killed
by signal N; 127/126: CMD not found / not executable). All settings:
docs/configuration.md.

Examples:
  numtrace run -o runA --steps 2 --label eager -- python train.py
  numtrace run -o runB --steps 2 --label compiled -- python train.py --compile
  numtrace run -o runF --steps 3 -- ./run_train.sh          # torchrun: one trace per rank
  numtrace run -o runK --steps all --kernel-name 'regex:^triton_' --launch-count 100 -- python t.py
  numtrace run -o runD --steps 2 --dump 'seq:412' -- python train.py    # tensors of one launch
  numtrace run -o dumpB --steps 2 --dump-first-divergence summary.json --side b -- python train.py --compile)");
  int code = 0;
  if (!ParseArgs(app, NormalizeRunArgs(args), ctx, &code)) return code;
  if (absl::Status s = TakeCommand(app, &options); !s.ok()) return FailLine(ctx, "run", s);
  if (absl::Status s = ResolveDumpFromSummary(&options); !s.ok()) return FailLine(ctx, "run", s);
  absl::StatusOr<CaptureOutcome> outcome = CaptureJob(options, ctx);
  if (!outcome.ok()) return FailLine(ctx, "run", outcome.status());
  if (!outcome->started) {
    FailLine(ctx, "run", outcome->error);
    return outcome->exit_code;
  }
  return outcome->exit_code;
}

}  // namespace numtrace::launcher
