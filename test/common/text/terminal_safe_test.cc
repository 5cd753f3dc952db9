// The terminal escape rule (common/text/terminal_safe.h): text from a trace
// cannot move the cursor, clear the screen or reorder a line.
#include "common/text/terminal_safe.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace numtrace {
namespace {

TEST(TerminalSafeTest, ControlBytesAreEscaped) {
  EXPECT_EQ(TerminalSafe("gemm\x1b[2J\r\n"), "gemm^[[2J\\x0d\\x0a");
  EXPECT_EQ(TerminalSafe(std::string_view("a\0b\x7f\t", 5)), "a\\x00b\\x7f\\x09");
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 stays
  EXPECT_EQ(TerminalSafe("\xc2\x9b" "2J"), "\\xc2\\x9b2J");  // C1 CSI
  EXPECT_EQ(TerminalSafe("\x9b" "2J\xff"), "\\x9b2J\\xff");  // not UTF-8
}

TEST(TerminalSafeTest, BidiControlsAndLineSeparatorsAreEscaped) {
  // U+202E makes the rest of a line read backwards; U+2028 breaks it.
  EXPECT_EQ(TerminalSafe("gemm\u202E" "txt.exe"), "gemm\\xe2\\x80\\xaetxt.exe");
  EXPECT_EQ(TerminalSafe("a\u2028" "b\u2066" "c"), "a\\xe2\\x80\\xa8" "b\\xe2\\x81\\xa6" "c");
  EXPECT_EQ(TerminalSafe("\u2014 dash"), "\u2014 dash");  // other punctuation stays
}

TEST(TerminalSafeTest, ErrorLineIsOneInertLineNamingTheProgram) {
  // Both front ends' error lines: "numtrace-diff: ..." and "numtrace VERB: ...".
  EXPECT_EQ(ErrorLine("numtrace show", "a\n.jsonl\x1b[2J: no such file"),
            "numtrace show: a\\x0a.jsonl^[[2J: no such file\n");
  EXPECT_EQ(ErrorLine("numtrace-diff", ""), "numtrace-diff: \n");
}

}  // namespace
}  // namespace numtrace
