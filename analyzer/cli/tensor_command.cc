#include "analyzer/cli/tensor_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include "analyzer/cli/diff_command.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/tensors/dump_reader.h"
#include "analyzer/tensors/tensor_diff.h"
#include "analyzer/report/tensor_report.h"

namespace numtrace::analyzer {

int RunTensorCommand(const TensorCommandOptions& opt, std::ostream& out, std::ostream& err,
                     bool stdout_is_tty) {
  // Dumps are small next to traces: read them first, so every file they
  // consist of (sidecar and .npy files) is among the inputs no output may
  // replace (output_file.h).
  absl::StatusOr<DumpSide> a = ReadDumpSide(opt.a, opt.dtype);
  if (!a.ok()) return FailLine(err, a.status());
  absl::StatusOr<DumpSide> b = ReadDumpSide(opt.b, opt.dtype);
  if (!b.ok()) return FailLine(err, b.status());
  std::vector<std::string> inputs = {opt.a, opt.b, a->path, b->path};
  for (const DumpSide* side : {&*a, &*b}) {
    for (const DumpArray& array : side->arrays) inputs.push_back(array.file);
  }
  const std::vector<OutputSpec> outputs = {{"--json", opt.json_path}, {"--html", opt.html_path}};
  if (absl::Status s = CheckOutputs(outputs, inputs, opt.force); !s.ok()) return FailLine(err, s);
  const bool stdout_taken = opt.json_path == kStdoutPath || opt.html_path == kStdoutPath;

  const TensorDiff diff = DiffDumps(*a, *b, {opt.rtol, opt.atol});
  if (!opt.json_path.empty()) {
    if (absl::Status s = WriteOutput(opt.json_path, TensorJsonSummary(diff), opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  if (!opt.html_path.empty()) {
    if (absl::Status s = WriteOutput(opt.html_path, TensorHtmlReport(diff), opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  if (!opt.quiet && !stdout_taken) {
    out << TensorTerminalSummary(diff, ShouldUseColor(opt.color, stdout_is_tty));
    if (!opt.json_path.empty()) out << "summary written to " << opt.json_path << "\n";
    if (!opt.html_path.empty()) out << "report written to " << opt.html_path << "\n";
  }
  out.flush();
  return diff.verdict == Verdict::kDiverged ? kExitDiverged : kExitOk;
}

}  // namespace numtrace::analyzer
