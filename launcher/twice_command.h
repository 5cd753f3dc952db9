// File: launcher/twice_command.h
//
// `numtrace twice -o DIR [capture options] -- CMD...`: the nondeterminism
// hunt. Runs CMD twice with identical settings (DIR/run1, DIR/run2), diffs
// the two captures (DIR/summary.json, DIR/report.html) and reports the
// origins: kernels whose outputs differ although every input they read was
// bitwise equal in both runs (atomics, split-K, nondeterministic
// algorithms), each with a one-line hint for its family
// (analyzer/judge/origin_hints.h).
//
// Exit status: 0 when the two runs are bitwise identical, 1 when they are
// not, 2 on bad usage, a failing job or unreadable traces.
//
// Example:
//   numtrace twice -o hunt --steps 0 -- python train.py
#ifndef NUMTRACE_LAUNCHER_TWICE_COMMAND_H_
#define NUMTRACE_LAUNCHER_TWICE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "launcher/command_context.h"
#include "common/format/diff_summary.h"

namespace numtrace::launcher {

// The origins part of the report, from a summary (exposed for tests).
void PrintOrigins(const DiffSummaryView& summary, std::ostream& out);

// args[0] == "twice".
int TwiceCommandMain(const std::vector<std::string>& args, const CommandContext& ctx);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_TWICE_COMMAND_H_
