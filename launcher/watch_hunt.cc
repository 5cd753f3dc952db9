#include "launcher/watch_hunt.h"

#include "launcher/rank_listing.h"

#include "analyzer/cli/diff_command.h"
#include "analyzer/report/dump_commands.h"
#include "common/text/terminal_safe.h"
#include "launcher/run_command.h"
#include "launcher/twice_command.h"
#include "common/format/enum_list.h"
#include "common/settings/settings.h"
#include "common/text/trim.h"

namespace numtrace::launcher {

int FinishWatchHunt(const RunOptions& options, const std::string& dir, const DiffSummaryView& watch,
                    const CommandContext& ctx) {
  if (!watch.steps) {
    return FailLine(ctx, "twice", "the watch runs' summary has no `steps`: neither run wrote digests");
  }
  const StepsView& s = *watch.steps;
  for (const std::string& n : s.notes) ctx.out << "note: " << n << "\n";
  if (!s.first_differing) {
    if (watch.verdict == Verdict::kIdentical) {
      ctx.out << "== verdict: every step is identical (" << s.compared << " steps compared by digest)\n";
      ctx.out.flush();
      return kExitOk;
    }
    // Digests equal, yet the runs differ (a step captured in full, or nothing compared).
    ctx.out << "== verdict: the runs differ (" << VerdictName(watch.verdict) << ") although no step's digests do\n";
    PrintOrigins(watch, ctx.out);
    ctx.out.flush();
    return kExitDiverged;
  }
  const int64_t step = *s.first_differing;
  // At operator level (--ops) the digests are of operator calls, not launches.
  std::string level = options.Get("NUMTRACE_LEVEL");
  if (options.settings.find("NUMTRACE_LEVEL") == options.settings.end()) level = ctx.env.Get("NUMTRACE_LEVEL");
  const bool ops = EnumFromName<CaptureLevel>(kCaptureLevelNames, Trim(level)) ==
                   CaptureLevel::kOps;
  ctx.out << "== first differing step: " << step << " (of " << s.compared << " compared), "
          << (ops ? "operator call " : "launch ") << s.first_index << " of the step";
  if (s.first_kind == StepDifference::kKernels) {
    ctx.out << (ops ? ": the operator sequences part there" : ": the kernel sequences part there");
  }
  ctx.out << "\n   run1: " << TerminalSafe(s.a_name) << "\n   run2: " << TerminalSafe(s.b_name)
          << "\n";
  if (s.nonfinite_a || s.nonfinite_b) {
    ctx.out << "   first NaN/Inf step: run1 " << (s.nonfinite_a ? std::to_string(*s.nonfinite_a) : "none")
            << ", run2 " << (s.nonfinite_b ? std::to_string(*s.nonfinite_b) : "none") << "\n";
  }

  // Both runs again, step `step` in full and no digests: the usual diff names the origins.
  const std::string stem = dir + "/step" + std::to_string(step);
  const std::string run_dirs[2] = {stem + "-run1", stem + "-run2"};
  // The digests covered every launch of the step, so the full capture keeps
  // them all: the settings that narrow a step (the launch window, the kernel
  // filters) are left out, given as options or in the environment.
  CommandContext whole{ctx.out, ctx.err, ctx.env, ctx.layout, ctx.stdout_is_tty};
  std::string left_out;
  RunOptions once_base = options;
  once_base.settings.erase("NUMTRACE_WATCH");
  whole.env.Unset("NUMTRACE_WATCH");
  for (const settings::Setting& setting : settings::Settings()) {
    if (!setting.narrows_step) continue;
    const std::string variable(setting.variable);
    std::string value = options.Get(variable);
    if (value.empty()) value = ctx.env.Get(variable);
    if (!value.empty()) {
      std::string_view option = setting.option.substr(setting.option.rfind(',') + 1);
      left_out += (left_out.empty() ? "" : " ") + std::string(option) + " " + analyzer::ShellQuote(value);
    }
    once_base.settings.erase(variable);
    whole.env.Unset(variable);
  }
  if (!left_out.empty()) {
    ctx.out << "   the full capture leaves out " << TerminalSafe(left_out)
            << ": the digests cover every launch of the step\n";
  }
  for (int i = 0; i < 2; ++i) {
    ctx.out << "== capture step " << step << " in full, run " << (i + 1) << " of 2: "
            << TerminalSafe(run_dirs[i]) << "\n";
    RunOptions once = once_base;
    once.Set(kOutputDirVariable, run_dirs[i]);
    once.force = false;
    once.Set("NUMTRACE_STEPS", std::to_string(step));
    if (once.Get("NUMTRACE_LABEL").empty()) once.Set("NUMTRACE_LABEL", "run" + std::to_string(i + 1));
    absl::StatusOr<CaptureOutcome> outcome = CaptureJob(once, whole);
    if (!outcome.ok()) return FailLine(ctx, "twice", outcome.status());
    // Before the next job runs into it too.
    if (std::string full = FullFileSystemLine(outcome->dir); !full.empty()) return FailLine(ctx, "twice", full);
    if (outcome->exit_code != 0) {
      return FailLine(ctx, "twice", "the job exited with status " + std::to_string(outcome->exit_code) +
                                        " capturing step " + std::to_string(step) + " (run " +
                                        std::to_string(i + 1) + ")");
    }
    if (outcome->traces == 0) {
      return FailLine(ctx, "twice", "capturing step " + std::to_string(step) + " wrote no trace (run " +
                                        std::to_string(i + 1) + "): does the job reach that step?");
    }
  }
  analyzer::DiffCommandOptions diff;
  diff.a = run_dirs[0];
  diff.b = run_dirs[1];
  diff.json_path = stem + "-summary.json";
  diff.html_path = stem + "-report.html";
  diff.force = true;  // ours: written by this hunt in its own DIR
  diff.quiet = true;
  if (analyzer::RunDiffCommand(diff, ctx.out, ctx.err, ctx.stdout_is_tty) == kExitError) {
    return kExitError;
  }
  absl::StatusOr<DiffSummaryView> full = ReadDiffSummary(diff.json_path);
  if (!full.ok()) return FailLine(ctx, "twice", full.status());
  ctx.out << "== step " << step << " in full: " << VerdictName(full->verdict) << "\n";
  if (full->verdict == Verdict::kIdentical) {
    ctx.out << "the full capture of step " << step << " is identical: the difference did not recur "
            << "(run-to-run nondeterminism that comes and goes)\n";
  } else {
    PrintOrigins(*full, ctx.out);
  }
  ctx.out << "report: " << TerminalSafe(diff.html_path) << "  summary: "
          << TerminalSafe(diff.json_path) << "\n";
  ctx.out.flush();
  return kExitDiverged;
}

}  // namespace numtrace::launcher
