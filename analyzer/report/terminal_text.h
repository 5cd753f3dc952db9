// File: analyzer/report/terminal_text.h
//
// Makes text from a trace inert on a terminal: kernel names, paths, labels
// and counter names come from files anyone can write, and an ESC sequence or
// a carriage return in them could clear the screen or forge a line of the
// summary. Every such string passes through TerminalSafe before it is
// printed, whether or not stdout is a terminal (logs get replayed with cat).
//
//   ESC           -> "^["
//   other C0 controls, DEL, \r, \n, \t -> "\xNN"
//   C1 controls (U+0080..U+009F), the bidi controls (U+202E reorders a
//   line), U+2028/U+2029 and bytes that are not valid UTF-8 -> "\xNN" a byte
//   everything else (printable ASCII, valid UTF-8) unchanged.
//
// Example:
//   TerminalSafe("gemm\x1b[2J\r\n");  // "gemm^[[2J\x0d\x0a"
#ifndef NUMTRACE_ANALYZER_REPORT_TERMINAL_TEXT_H_
#define NUMTRACE_ANALYZER_REPORT_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace numtrace::analyzer {

std::string TerminalSafe(std::string_view text);

// The length of the character at text[i] when TerminalSafe keeps it as it
// is (printable ASCII, valid UTF-8 that is not a control), else 0. The one
// rule ShellQuote follows too, so a quoted word prints unchanged.
size_t TerminalInertLength(std::string_view text, size_t i);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_TERMINAL_TEXT_H_
