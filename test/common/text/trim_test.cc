// The one trimming rule (common/text/trim.h): the six ASCII whitespace
// bytes come off the ends, nothing else does, whatever the locale.
#include "common/text/trim.h"

#include <gtest/gtest.h>

#include <clocale>
#include <string>

namespace numtrace {
namespace {

TEST(Trim, EachAsciiWhitespaceByteComesOffBothEnds) {
  for (char c : std::string(" \t\n\v\f\r")) {
    const std::string s = std::string(2, c) + "a " + c + "b" + std::string(2, c);
    EXPECT_EQ(Trim(s), "a " + std::string(1, c) + "b") << int{c};
    EXPECT_EQ(TrimLeft(s), "a " + std::string(1, c) + "b" + std::string(2, c)) << int{c};
  }
  EXPECT_EQ(Trim(" 2,5\r\n"), "2,5");  // a value from a file written on Windows
}

TEST(Trim, NothingButWhitespaceIsEmpty) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\r\n"), "");
  EXPECT_EQ(TrimLeft("\n\n"), "");
}

TEST(Trim, OtherBytesStayWhateverTheLocale) {
  // NUL, other control bytes and bytes >= 0x80 (a UTF-8 no-break space,
  // Latin-1's 0xA0) are not whitespace here, even where the process's
  // locale calls them spaces: the shim runs inside a job that may set one.
  const char* was = std::setlocale(LC_CTYPE, nullptr);
  const std::string saved = was != nullptr ? was : "C";
  for (const char* name : {"C", "C.UTF-8", "en_US.ISO-8859-1", "de_DE.ISO-8859-1"}) {
    std::setlocale(LC_CTYPE, name);  // one that is not installed leaves the last
    EXPECT_EQ(Trim("\xa0x\xa0"), "\xa0x\xa0") << name;
    EXPECT_EQ(Trim("\xc2\xa0x\xc2\xa0"), "\xc2\xa0x\xc2\xa0") << name;
    EXPECT_EQ(Trim(std::string("\0x\x1b", 3)), std::string("\0x\x1b", 3)) << name;
  }
  std::setlocale(LC_CTYPE, saved.c_str());
}

}  // namespace
}  // namespace numtrace
