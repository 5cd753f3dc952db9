#include "launcher/numtrace_main.h"

#include "analyzer/cli/diff_command.h"
#include "analyzer/cli/error_line.h"
#include "analyzer/cli/merge_command.h"
#include "common/version/version.h"
#include "launcher/doctor/doctor_command.h"
#include "launcher/run_command.h"
#include "launcher/show_command.h"
#include "launcher/twice_command.h"

namespace numtrace::launcher {
namespace {

constexpr const char kUsage[] = R"(numtrace: find the first CUDA kernel where two training runs part

usage: numtrace VERB [options]   (numtrace VERB --help for each verb's options and examples)

verbs:
  run     capture a job:            numtrace run -o runA --steps 2 -- python train.py
  diff    compare two captures:     numtrace diff runA runB -o report.html
  merge   join sharded diffs:       numtrace merge shard*.json --json summary.json
  twice   nondeterminism hunt:      numtrace twice -o hunt --steps 0 -- python train.py
  show    read a trace:             numtrace show runA/rank_0.ntrace.jsonl --kernel gemm
  doctor  can capture work here?    numtrace doctor

Typical session (eager vs torch.compile):
  numtrace doctor
  numtrace run -o eager --steps 2 --label eager -- python train.py
  numtrace run -o compiled --steps 2 --label compiled -- python train.py --compile
  numtrace diff eager compiled -o report.html

Documentation: share/doc/numtrace (installed) or docs/ (source).
)";

}  // namespace

int NumtraceMain(const std::vector<std::string>& args, const CommandContext& ctx, SystemProbe& probe) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    ctx.out << kUsage;
    return args.empty() ? kExitError : kExitOk;
  }
  const std::string& verb = args[0];
  if (verb == "--version" || verb == "version") {
    ctx.out << "numtrace " << kVersion << "\n";
    return kExitOk;
  }
  // The diff's own failure lines (also inside twice's hunt) name the verb as
  // typed, as every other line of the command does.
  analyzer::SetProgramName("numtrace " + verb);
  if (verb == "run") return RunCommandMain(args, ctx);
  if (verb == "twice") return TwiceCommandMain(args, ctx);
  if (verb == "show") return ShowCommandMain(args, ctx);
  if (verb == "doctor") return DoctorCommandMain(args, ctx, probe);
  if (verb == "diff") {
    std::vector<const char*> argv = {"numtrace diff"};
    for (size_t i = 1; i < args.size(); ++i) argv.push_back(args[i].c_str());
    return analyzer::DiffMain(static_cast<int>(argv.size()), argv.data(), ctx.out, ctx.err,
                              ctx.stdout_is_tty);
  }
  if (verb == "merge") {
    std::vector<const char*> argv = {"numtrace merge"};
    for (size_t i = 1; i < args.size(); ++i) argv.push_back(args[i].c_str());
    return analyzer::MergeMain(static_cast<int>(argv.size()), argv.data(), ctx.out, ctx.err);
  }
  return FailLine(ctx, verb, "unknown verb (run, diff, merge, twice, show, doctor; see numtrace --help)");
}

}  // namespace numtrace::launcher
