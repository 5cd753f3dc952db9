// File: analyzer/cli/tensor_command.h
//
// `numtrace-diff --tensors A B`: the element-level view of one launch, from
// two tensor dumps (directories holding one dump, sidecars, or two .npy
// files with --dtype). Its own small path beside the trace diff: read both
// sides (analyzer/tensors/dump_reader.h), compare (tensor_diff.h), write the
// terminal summary, --json and -o/--html (tensor_report.h). Exit codes as
// for a trace diff: 0 identical or within tolerance, 1 diverged, 2 bad usage
// or unreadable input (one line naming the file).
//
// Example:
//   TensorCommandOptions o{.a = "dumpA", .b = "dumpB", .json_path = "t.json"};
//   int code = RunTensorCommand(o, std::cout, std::cerr, /*stdout_is_tty=*/false);
#ifndef NUMTRACE_ANALYZER_CLI_TENSOR_COMMAND_H_
#define NUMTRACE_ANALYZER_CLI_TENSOR_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>

#include "analyzer/report/terminal_summary.h"
#include "common/format/dtype.h"

namespace numtrace::analyzer {

struct TensorCommandOptions {
  std::string a, b;
  std::string json_path, html_path;
  std::optional<DType> dtype;  // --dtype, for bare .npy files
  double rtol = 1e-5, atol = 0;
  bool force = false, quiet = false;
  ColorMode color = ColorMode::kAuto;
};

int RunTensorCommand(const TensorCommandOptions& options, std::ostream& out, std::ostream& err,
                     bool stdout_is_tty);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_TENSOR_COMMAND_H_
