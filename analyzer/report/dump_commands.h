// File: analyzer/report/dump_commands.h
//
// The element-level follow-up of a first divergence: ready-to-run commands
// that re-capture each side with a tensor dump of exactly that launch
// (`numtrace run -o DIR ... --dump seq:N`), and the `--tensors` diff of the
// two dumps. Built from what each trace's header recorded: the command line
// (the environment's job.command - what `numtrace run` started, a launcher
// with all its ranks - else the process's run.argv), the captured steps
// (capture.steps), the settings that select launches (capture.settings, as
// options; common/settings/settings.h) and the label, so the re-run numbers
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

// The commands that capture step `step` of each side's run in full (watch
// mode's follow-up, docs/walkthroughs.md) and diff the two: the run options
// each trace's header recorded, `--steps STEP`, output `<trace dir>-step<STEP>`
// (`-a`/`-b` appended when both traces share a directory, so the sides never
// write or diff one directory). The settings that narrow a step (the launch
// window, the kernel filters: `narrows_step`) are left out, since the digests
// cover every launch, and named in left_out_a/b.
struct StepCapture {
  std::string dir_a, dir_b;
  std::string command_a, command_b;
  std::string diff;                    // numtrace diff DIR_A DIR_B
  std::string left_out_a, left_out_b;  // "--launch-count 2 --kernel-name softmax", or empty
  // A side was one worker of a launcher (rank or world size recorded) and
  // its trace holds no job.command (captured without numtrace run): its
  // command is the worker's own command line.
  bool worker = false;
};
StepCapture BuildStepCapture(const Trace& a, const Trace& b, int64_t step);

// `s` as one POSIX shell word: as it is when plainly safe, else
// single-quoted, or `$'...'` with \xNN for each byte a terminal would act on
// or misshow (controls, bytes that are not UTF-8, C1 and bidi controls), so
// the printed word is inert and pastes as the exact bytes. A leading `=` is
// quoted (zsh's EQUALS expansion).
std::string ShellQuote(std::string_view s);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_DUMP_COMMANDS_H_
