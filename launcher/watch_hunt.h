// File: launcher/watch_hunt.h
//
// `numtrace twice --watch`: the whole hunt in one command. After the two
// watch runs and their diff (twice_command.cc), the summary's `steps` names
// the first step whose digests differ; both runs are then started again
// capturing that step in full (DIR/stepS-run1, DIR/stepS-run2), diffed
// (DIR/stepS-summary.json, DIR/stepS-report.html), and the origins of that
// diff are listed with their hints. Exit 0 only when every step was
// identical; 1 when the runs differ; 2 on errors.
//
// Example:
//   if (!options.watch.empty()) return FinishWatchHunt(options, dir, summary, ctx);
#ifndef NUMTRACE_LAUNCHER_WATCH_HUNT_H_
#define NUMTRACE_LAUNCHER_WATCH_HUNT_H_

#include <string>

#include "launcher/command_context.h"
#include "common/format/diff_summary.h"
#include "launcher/run_options.h"

namespace numtrace::launcher {

int FinishWatchHunt(const RunOptions& options, const std::string& dir, const DiffSummaryView& watch_summary,
                    const CommandContext& ctx);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_WATCH_HUNT_H_
