// File: launcher/numtrace_main.h
//
// The numtrace command: one installed program with verbs, in the style of
// nsys and compute-sanitizer.
//
//   numtrace run -o DIR [options] -- CMD...   capture a job
//   numtrace diff A B [options]               = numtrace-diff
//   numtrace twice -o DIR [options] -- CMD... run twice, find nondeterminism
//   numtrace show TRACE [--kernel RE] [--seq N..M] [--json]
//   numtrace doctor [-o DIR]                  can capture work here?
//
// Example:
//   std::vector<std::string> args = {"show", "runA/rank_0.ntrace.jsonl"};
//   int code = NumtraceMain(args, ctx, probe);
#ifndef NUMTRACE_LAUNCHER_NUMTRACE_MAIN_H_
#define NUMTRACE_LAUNCHER_NUMTRACE_MAIN_H_

#include <string>
#include <vector>

#include "launcher/command_context.h"
#include "launcher/doctor/system_facts.h"

namespace numtrace::launcher {

// args: the arguments after the program name (args[0] is the verb).
int NumtraceMain(const std::vector<std::string>& args, const CommandContext& ctx, SystemProbe& probe);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_NUMTRACE_MAIN_H_
