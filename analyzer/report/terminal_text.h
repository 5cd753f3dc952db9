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
//   C1 controls (U+0080..U+009F) and bytes that are not valid UTF-8 -> "\xNN"
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

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_TERMINAL_TEXT_H_
