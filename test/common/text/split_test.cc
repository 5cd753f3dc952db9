// The one splitting rule (common/text/split.h): every piece between
// separators, empty ones included, nothing trimmed, views into the text.
#include "common/text/split.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace numtrace {
namespace {

using Pieces = std::vector<std::string_view>;

TEST(Split, NSeparatorsGiveNPlusOnePieces) {
  EXPECT_EQ(Split("a", ','), (Pieces{"a"}));
  EXPECT_EQ(Split("1,3-4,7", ','), (Pieces{"1", "3-4", "7"}));
  EXPECT_EQ(Split("gemm;regex:^triton_", ';'), (Pieces{"gemm", "regex:^triton_"}));
}

// Callers give an empty item their own meaning (skipped or refused), so the
// splitter keeps every one: leading, doubled, trailing, and the empty text.
TEST(Split, EmptyPiecesAreKept) {
  EXPECT_EQ(Split("", ','), (Pieces{""}));
  EXPECT_EQ(Split(",", ','), (Pieces{"", ""}));
  EXPECT_EQ(Split("1,,2", ','), (Pieces{"1", "", "2"}));
  EXPECT_EQ(Split(",a,", ','), (Pieces{"", "a", ""}));
  EXPECT_EQ(Split("a;;", ';'), (Pieces{"a", "", ""}));
}

TEST(Split, PiecesAreNotTrimmedAndOtherSeparatorsStay) {
  EXPECT_EQ(Split(" 1 , 2\r\n", ','), (Pieces{" 1 ", " 2\r\n"}));
  EXPECT_EQ(Split("a,b;c", ';'), (Pieces{"a,b", "c"}));
  EXPECT_EQ(Split(" ", ','), (Pieces{" "}));
}

TEST(Split, PiecesViewTheText) {
  const std::string text = "ab,cd";
  const Pieces p = Split(text, ',');
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].data(), text.data());
  EXPECT_EQ(p[1].data(), text.data() + 3);
}

}  // namespace
}  // namespace numtrace
