// File: analyzer/report/dump_commands.h
//
// The element-level follow-up of a first divergence: ready-to-run commands
// that re-capture each side with a tensor dump of exactly that launch
// (`numtrace run -o DIR ... --dump seq:N`), and the `--tensors` diff of the
// two dumps. Built from what each trace's header recorded: the command line
// (run.argv), the captured steps (capture.steps), the settings that select
// launches (capture.settings, as options; shim/engine/settings.h) and the
// label, so the re-run numbers
// its launches as the trace did. `--dump-expect` passes the kernel name and
// buffer sizes the trace recorded, which the dumper checks the re-run's
// launch against. Commands are meant for the directory the run was started
// from (argv as recorded).
//
// Example:
//   DumpCommands c = BuildDumpCommands(trace_a, kernel_a, trace_b, kernel_b);
//   c.capture_a;  // "numtrace run -o runA-dump-seq41 --steps 2 --label A
//                 //  --dump seq:41 --dump-expect k@4096,2560 -- python train.py"
//   c.tensors;    // "numtrace diff --tensors runA-dump-seq41/dump_0_41.json ..."
#ifndef NUMTRACE_ANALYZER_REPORT_DUMP_COMMANDS_H_
#define NUMTRACE_ANALYZER_REPORT_DUMP_COMMANDS_H_

#include <string>
#include <string_view>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct DumpCommands {
  std::string capture_a, capture_b;  // re-capture with the dump
  std::string tensors;               // compare the two dumps
};

DumpCommands BuildDumpCommands(const Trace& a, const Kernel& ka, const Trace& b, const Kernel& kb);

// The command that captures step `step` of `t`'s run in full (watch mode's
// follow-up, docs/walkthroughs.md): the same run options as the trace's
// header recorded, `--steps STEP`, output `<trace dir>-step<STEP>`.
std::string StepCaptureCommand(const Trace& t, int64_t step);
// Where that command writes.
std::string StepCaptureDir(const Trace& t, int64_t step);

// `s` as one POSIX shell word (single-quoted unless plainly safe).
std::string ShellQuote(std::string_view s);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_DUMP_COMMANDS_H_
