// File: analyzer/report/tensor_report.h
//
// The three outputs of `numtrace-diff --tensors` (docs/report.md, "Element
// view"): a terminal summary, the JSON tensor diff summary of
// docs/format.md section 6, and a self-contained HTML page with each
// buffer's ULP histogram and a strip showing where along the buffer the
// mismatches lie.
//
// Example:
//   std::cout << TensorTerminalSummary(diff, /*color=*/false);
//   WriteOutput("t.json", TensorJsonSummary(diff), force, std::cout);  // cli/output_file.h
//   WriteOutput("t.html", TensorHtmlReport(diff), force, std::cout);
#ifndef NUMTRACE_ANALYZER_REPORT_TENSOR_REPORT_H_
#define NUMTRACE_ANALYZER_REPORT_TENSOR_REPORT_H_

#include <string>

#include "analyzer/tensors/tensor_diff.h"

namespace numtrace::analyzer {

inline constexpr std::string_view kTensorDiffFormatName = "numtrace-tensor-diff";

std::string TensorTerminalSummary(const TensorDiff& diff, bool color);
std::string TensorJsonSummary(const TensorDiff& diff);
std::string TensorHtmlReport(const TensorDiff& diff);

// "arg 1 after" / "arg 0 #2 before": how every output names a pair.
std::string TensorPairName(const TensorPair& p);

// A value at full precision ("%.9g", "nan", "inf", "-inf"): the point of the
// element view is the exact numbers, in the terminal and the page alike.
std::string TensorValue(double v);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_TENSOR_REPORT_H_
