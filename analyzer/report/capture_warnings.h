// File: analyzer/report/capture_warnings.h
//
// Warnings read from a trace's footer counters (docs/format.md, "Footer
// counters") about how complete the capture was, shared by the terminal
// summary and the HTML report: a trace where most launches had no
// parameter layout (so most kernels carry no buffers: a diff of names, not
// numbers), measurements dropped because the device ring was full, and a
// PyTorch tensor map that was not attached (buffers are whole allocator
// segments; read from its note).
//
// Example:
//   for (const std::string& w : CaptureWarnings(trace, "A")) print("warning: " + w);
#ifndef NUMTRACE_ANALYZER_REPORT_CAPTURE_WARNINGS_H_
#define NUMTRACE_ANALYZER_REPORT_CAPTURE_WARNINGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// One line per problem (no newline, not yet terminal-escaped); `side`
// names the trace ("A", "B").
std::vector<std::string> CaptureWarnings(const Trace& t, std::string_view side);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_CAPTURE_WARNINGS_H_
