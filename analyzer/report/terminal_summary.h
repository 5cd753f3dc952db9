// File: analyzer/report/terminal_summary.h
//
// The short summary numtrace-diff prints: a verdict line, counts and match
// methods, the first divergence with the kernels just before it, the first
// NaN/Inf of each run, truncation warnings and the largest divergences. One
// screen, so a user sees at once where the runs part. ANSI colour only when
// the caller says so (a TTY and NO_COLOR unset: see ShouldUseColor).
//
// Example:
//   TerminalOptions opt{.color = ShouldUseColor(ColorMode::kAuto, isatty(1))};
//   std::cout << TerminalSummary(report, opt);
#ifndef NUMTRACE_ANALYZER_REPORT_TERMINAL_SUMMARY_H_
#define NUMTRACE_ANALYZER_REPORT_TERMINAL_SUMMARY_H_

#include <string>

#include "analyzer/report/rank_diff.h"

namespace numtrace::analyzer {

enum class ColorMode { kAuto, kAlways, kNever };

// kAuto: colour when the stream is a terminal and NO_COLOR is unset or empty.
bool ShouldUseColor(ColorMode mode, bool is_tty);

struct TerminalOptions {
  bool color = false;
  int top = 5;      // largest divergences listed per rank (0: none)
  int context = 3;  // pairs shown before the first divergence
  bool verbose = false;  // --verbose: capture counters at 0 too
};

std::string TerminalSummary(const DiffReport& report, const TerminalOptions& options);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_TERMINAL_SUMMARY_H_
