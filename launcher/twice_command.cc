#include "launcher/twice_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "CLI/CLI.hpp"
#include "analyzer/cli/diff_command.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/judge/origin_hints.h"
#include "common/text/terminal_safe.h"
#include "launcher/child_process.h"
#include "launcher/job_environment.h"
#include "launcher/output_dir.h"
#include "launcher/run_command.h"
#include "launcher/watch_hunt.h"
#include "common/format/enum_list.h"
#include "common/format/summary_words.h"
#include "common/settings/modes.h"
#include "common/text/trim.h"

namespace numtrace::launcher {
namespace {

using analyzer::HintForKernel;
using analyzer::OriginHint;

void PrintKernel(int64_t rank, uint64_t seq, const std::string& name, std::ostream& out) {
  out << "  ";
  if (rank >= 0) out << "rank " << rank << " ";
  out << "seq " << seq << "  " << TerminalSafe(name);
}

void PrintHint(const std::string& name, std::ostream& out) {
  if (const OriginHint* h = HintForKernel(name)) {
    out << "      " << h->family << ": " << h->hint << "\n";
  } else {
    out << "      no known family: look at its tensors with `numtrace run --dump` on that launch\n";
  }
}

// The settings of `values` that allow run-to-run differences, each warned
// once (`warned` keeps the keys said already).
void WarnRisks(const EnvironmentValues& values, int64_t world_size, std::vector<std::string>* warned,
               std::string_view when, const CommandContext& ctx) {
  for (const RunToRunRisk& r : RunToRunRisks(values, /*cuda=*/true, world_size)) {
    if (std::find(warned->begin(), warned->end(), r.key) != warned->end()) continue;
    warned->push_back(r.key);
    WarnLine(ctx, "twice", std::string(when) + r.why + "; the runs may differ for this alone");
  }
}

}  // namespace

void PrintOrigins(const DiffSummaryView& s, std::ostream& out) {
  if (!s.has_origins) {
    out << "this numtrace-diff's summary names no origins (no `origins` field)";
    if (s.first_divergence) {
      out << "; the first divergence:\n";
      PrintKernel(s.first_divergence->rank, s.first_divergence->a_seq, s.first_divergence->a_name, out);
      out << "  (" << PairStatusName(s.first_divergence->kind) << ")\n";
      PrintHint(s.first_divergence->a_name, out);
    } else {
      out << "\n";
    }
    return;
  }
  if (s.origins.empty()) {
    out << "no origin found: no kernel's outputs differ while its inputs were equal (the "
           "difference comes from outside the captured steps, or inputs were not comparable)\n";
    if (s.first_divergence) {
      out << "first divergence:";
      PrintKernel(s.first_divergence->rank, s.first_divergence->a_seq, s.first_divergence->a_name, out);
      out << "  (cause "
          << (s.first_divergence->cause ? CauseName(*s.first_divergence->cause) : "unknown")
          << ")\n";
    }
    return;
  }
  out << s.origin_count << (s.origin_count == 1 ? " origin" : " origins")
      << ": kernels whose inputs were bitwise equal in both runs but whose outputs were not\n";
  for (const OriginView& o : s.origins) {
    PrintKernel(o.rank, o.a_seq, o.a_name, out);
    char score[32];
    std::snprintf(score, sizeof score, "%.3g", o.score);
    out << "  (" << VerdictName(o.status) << ", score " << score << ", " << o.descendants
        << " later diverged kernels follow from it)\n";
    PrintHint(o.a_name, out);
  }
}

int TwiceCommandMain(const std::vector<std::string>& args, const CommandContext& ctx) {
  RunOptions options;
  CLI::App app{"numtrace twice: run a job twice with identical settings and find where the runs "
               "part (the nondeterminism hunt)"};
  app.name("numtrace twice");
  AddRunOptions(&app, &options);
  app.footer(R"(Usage: numtrace twice -o DIR [options] [--] CMD ARGS...

Writes DIR/run1, DIR/run2 (one capture each), DIR/summary.json and
DIR/report.html. Capture early steps (or all of a short job): an origin must
lie inside the captured steps to be named. Exit 0 when the runs are bitwise
identical, 1 when not, 2 on errors.

Examples:
  numtrace twice -o hunt --steps 0 -- python train.py
  numtrace twice -o hunt --watch -- python train.py   # every step by digest, then the first differing one in full
  numtrace twice -o hunt --steps all -- numtrace-sim --steps 2 --nondeterministic
  numtrace twice -o hunt --steps 1 --kernel-name regex:gemm -- torchrun --nproc-per-node 2 train.py)");
  int code = 0;
  if (!ParseArgs(app, NormalizeRunArgs(args), ctx, &code)) return code;
  if (absl::Status s = TakeCommand(app, &options); !s.ok()) return FailLine(ctx, "twice", s);

  // Both runs' settings are judged before DIR is made or a job started.
  std::vector<std::string> unused;
  if (absl::Status s = CheckJobSettings(options, ctx, &unused); !s.ok()) return FailLine(ctx, "twice", s);
  absl::StatusOr<std::string> dir = PrepareOutputDir(options.output_dir(), options.force);
  if (!dir.ok()) return FailLine(ctx, "twice", dir.status());
  // The hunt's own outputs, checked before any job runs (output_file.h: never
  // through a symbolic link, never onto a directory or a device).
  if (absl::Status s = analyzer::CheckOutputs({{"the hunt's summary", *dir + "/summary.json"},
                                               {"the hunt's report", *dir + "/report.html"}},
                                              {}, /*force=*/true);
      !s.ok()) {
    return FailLine(ctx, "twice", s);
  }
  const std::string run_dirs[2] = {*dir + "/run1", *dir + "/run2"};
  // --force lets the hunt write its summary and report over an earlier
  // hunt's, never mix its traces into that hunt's runs: said before any job.
  for (const std::string& run : run_dirs) {
    std::error_code ec;
    if (std::filesystem::exists(run, ec) && !std::filesystem::is_empty(run, ec)) {
      return FailLine(ctx, "twice", options.output_dir() + " holds an earlier hunt (" +
                                        std::filesystem::path(run).filename().string() +
                                        " is not empty): --force never mixes two hunts' traces; use a fresh -o");
    }
  }
  // Before any run: what the job's environment already says (variables);
  // after run 1: what its trace recorded (torch's settings, from the hooks).
  const int64_t world_size = JobWorldSize(ctx.env, options.command);
  std::vector<std::string> warned;
  WarnRisks(RecordedVariables(ctx.env), world_size, &warned, "", ctx);
  EnvironmentValues recorded;
  for (int i = 0; i < 2; ++i) {
    ctx.err << "== run " << (i + 1) << " of 2: " << TerminalSafe(run_dirs[i]) << "\n";
    RunOptions once = options;
    once.Set(kOutputDirVariable, run_dirs[i]);
    once.force = false;  // never mix with an earlier hunt's traces
    if (once.Get("NUMTRACE_LABEL").empty()) once.Set("NUMTRACE_LABEL", "run" + std::to_string(i + 1));
    absl::StatusOr<CaptureOutcome> outcome = CaptureJob(once, ctx);
    if (!outcome.ok()) return FailLine(ctx, "twice", outcome.status());
    // Before the next job runs into it too.
    if (std::string full = FullFileSystemLine(outcome->dir); !full.empty()) return FailLine(ctx, "twice", full);
    if (!outcome->started) {
      FailLine(ctx, "twice", outcome->error);
      return outcome->exit_code;
    }
    if (outcome->exit_code != 0) {
      return FailLine(ctx, "twice", "the job " + DescribeExit(outcome->exit_code, outcome->signal) +
                                        " in run " + std::to_string(i + 1) + "; fix it before the hunt");
    }
    if (outcome->traces == 0) return FailLine(ctx, "twice", "run " + std::to_string(i + 1) + " captured nothing");
    if (i == 0) {
      recorded = TraceEnvironmentIn(run_dirs[0]);
      WarnRisks(recorded, world_size, &warned, "run 1 recorded: ", ctx);
    }
  }

  analyzer::DiffCommandOptions diff;
  diff.a = run_dirs[0];
  diff.b = run_dirs[1];
  diff.json_path = *dir + "/summary.json";
  diff.html_path = *dir + "/report.html";
  diff.force = true;  // ours: written by this hunt in its own DIR
  diff.quiet = true;
  // The rolled-up result in memory: summary.json is for the user, not read back.
  DiffSummaryView summary_view;
  diff.summary = &summary_view;
  int diff_code = analyzer::RunDiffCommand(diff, ctx.out, ctx.err, ctx.stdout_is_tty);
  if (diff_code == kExitError) return kExitError;
  const DiffSummaryView* summary = &summary_view;
  // Watch mode as the runs had it: the option, else the environment the
  // runs inherited (the option beats the environment, as in the shim).
  std::string watch = options.Get("NUMTRACE_WATCH");
  if (options.settings.find("NUMTRACE_WATCH") == options.settings.end()) watch = ctx.env.Get("NUMTRACE_WATCH");
  const std::optional<settings::WatchMode> watch_mode =
      EnumFromName<settings::WatchMode>(settings::kWatchModeNames, Trim(watch));
  if (watch_mode && *watch_mode != settings::WatchMode::kOff) {
    ctx.out << "digest report: " << TerminalSafe(diff.html_path)
            << "  summary: " << TerminalSafe(diff.json_path) << "\n";
    return FinishWatchHunt(options, *dir, *summary, ctx);
  }
  ctx.out << "== verdict: ";
  if (summary->verdict == Verdict::kIdentical) {
    ctx.out << "the two runs are bitwise identical\n";
  } else {
    ctx.out << "the two runs differ (" << VerdictName(summary->verdict) << ")\n";
    PrintOrigins(*summary, ctx.out);
    // The setting most likely responsible: one that allows run-to-run
    // differences, preferring one that can change the first origin's kernel.
    if (recorded.empty()) recorded = RecordedVariables(ctx.env);
    const std::vector<RunToRunRisk> risks = RunToRunRisks(recorded, /*cuda=*/true, world_size);
    const std::string origin = !summary->origins.empty()       ? summary->origins.front().a_name
                               : summary->first_divergence ? summary->first_divergence->a_name
                                                           : std::string();
    if (const RunToRunRisk* r = LikelyCause(risks, origin)) {
      ctx.out << "likely cause: " << r->key << ": " << r->why << "\n";
    } else if (!risks.empty()) {
      ctx.out << "settings that allow run-to-run differences (none known to change that kernel):";
      for (const RunToRunRisk& k : risks) ctx.out << " " << k.key;
      ctx.out << "\n";
    }
  }
  ctx.out << "report: " << TerminalSafe(diff.html_path) << "  summary: "
          << TerminalSafe(diff.json_path) << "\n";
  ctx.out.flush();
  return summary->verdict == Verdict::kIdentical ? kExitOk : kExitDiverged;
}

}  // namespace numtrace::launcher
