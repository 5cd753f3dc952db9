// Terminal output is inert: text from a trace cannot move the cursor, clear
// the screen or forge a line of the summary (the escape rule itself:
// test/common/text/terminal_safe_test.cc).
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/report/terminal_summary.h"
#include "test/analyzer/report/report_fixture.h"

namespace numtrace::analyzer {
namespace {

using testing::RankFixture;

TEST(TerminalTextTest, AKernelNameCannotForgeASummaryLine) {
  RankFixture f(0, "a.jsonl", "b.jsonl");
  const std::string evil = "gemm\x1b[2J\r\nnumtrace-diff: identical\n";
  f.AddPair(evil, evil, PairStatus::kDiverged, 1e-3);
  f.Finish();
  f.a().path = "a\x1b]0;title\x07.jsonl";
  DiffReport report{"a\r.jsonl", "b.jsonl", false, {f.Diff()}};
  for (bool color : {false, true}) {
    std::string s = TerminalSummary(report, {.color = color, .top = 5, .context = 2});
    // Only our own lines: every line starts as the summary's lines do.
    size_t start = 0;
    int lines = 0;
    while (start < s.size()) {
      size_t end = s.find('\n', start);
      std::string_view line(s.data() + start, end - start);
      EXPECT_FALSE(line.starts_with("numtrace-diff: identical")) << s;
      EXPECT_EQ(line.find('\r'), std::string_view::npos) << s;
      start = end + 1;
      ++lines;
    }
    EXPECT_EQ(s.find("numtrace-diff: "), 0u);
    EXPECT_NE(s.find("gemm^[[2J\\x0d\\x0anumtrace-diff: identical\\x0a"), std::string::npos) << s;
    EXPECT_EQ(s.find("\x07"), std::string::npos);
    if (!color) {
      EXPECT_EQ(s.find('\x1b'), std::string::npos) << s;
    }
    // With colour, ESC appears only in our own SGR codes.
    for (size_t at = s.find('\x1b'); at != std::string::npos; at = s.find('\x1b', at + 1)) {
      EXPECT_EQ(s[at + 1], '[') << s.substr(at, 10);
      EXPECT_NE(s.substr(at, 4), "\x1b[2J");
    }
    EXPECT_GT(lines, 3);
  }
}

}  // namespace
}  // namespace numtrace::analyzer
