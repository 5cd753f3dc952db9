// File: common/text/terminal_safe.h
//
// The one escape rule for text printed on a terminal, used by both front
// ends: numtrace-diff's summary, listings and error lines, and the numtrace
// command's (show, twice, doctor, the per-rank listing, its error lines).
// Kernel names, paths, labels and counter names come from files anyone can
// write, and an ESC sequence or a carriage return in them could clear the
// screen or forge a line of the summary. Every such string passes through
// TerminalSafe before it is printed, whether or not stdout is a terminal
// (logs get replayed with cat). Quoting a value inside a one-line message
// is one_line.h's rule; a line is printed through this one.
//
//   ESC           -> "^["
//   other C0 controls, DEL, \r, \n, \t -> "\xNN"
//   C1 controls (U+0080..U+009F), the bidi controls (U+202E reorders a
//   line), U+2028/U+2029 and bytes that are not valid UTF-8 -> "\xNN" a byte
//   everything else (printable ASCII, valid UTF-8) unchanged.
//
// Example:
//   TerminalSafe("gemm\x1b[2J\r\n");  // "gemm^[[2J\x0d\x0a"
#ifndef NUMTRACE_COMMON_TEXT_TERMINAL_SAFE_H_
#define NUMTRACE_COMMON_TEXT_TERMINAL_SAFE_H_

#include <string>
#include <string_view>

namespace numtrace {

std::string TerminalSafe(std::string_view text);

// The length of the character at text[i] when TerminalSafe keeps it as it
// is (printable ASCII, valid UTF-8 that is not a control), else 0. The one
// rule ShellQuote follows too, so a quoted word prints unchanged.
size_t TerminalInertLength(std::string_view text, size_t i);

// The one error or warning line both front ends print on stderr,
// "<program>: <message>\n" with the message made inert, <program> as the
// user typed it ("numtrace-diff", "numtrace diff", "numtrace show").
//   ErrorLine("numtrace show", "x\n.jsonl: no such file")
//     // "numtrace show: x\x0a.jsonl: no such file\n"
std::string ErrorLine(std::string_view program, std::string_view message);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_TEXT_TERMINAL_SAFE_H_
