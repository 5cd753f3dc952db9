// File: test/shim/log/log_test.cc
//
// The shim's logging facade: level names, filtering (warn by default), the
// "numtrace: " prefix and one line per message on stderr.
#include "shim/log/log.h"

#include <gtest/gtest.h>

#include <string>

namespace numtrace::shim::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = GetLevel(); }
  void TearDown() override { SetLevel(saved_); }
  Level saved_ = Level::kWarn;
};

TEST_F(LogTest, DefaultIsWarn) {
  EXPECT_EQ(GetLevel(), Level::kWarn);
  EXPECT_TRUE(Enabled(Level::kWarn));
  EXPECT_TRUE(Enabled(Level::kError));
  EXPECT_FALSE(Enabled(Level::kInfo));
}

TEST_F(LogTest, ParsesLevelNames) {
  Level l = Level::kOff;
  ASSERT_TRUE(ParseLevel("debug", &l));
  EXPECT_EQ(l, Level::kDebug);
  ASSERT_TRUE(ParseLevel("warning", &l));
  EXPECT_EQ(l, Level::kWarn);
  EXPECT_FALSE(ParseLevel("loud", &l));
  EXPECT_EQ(l, Level::kWarn) << "unchanged on a bad name";
  SetLevel("info");
  EXPECT_EQ(GetLevel(), Level::kInfo);
  SetLevel("nonsense");
  EXPECT_EQ(GetLevel(), Level::kInfo) << "a bad name keeps the level";
}

TEST_F(LogTest, WritesOnePrefixedLineAtOrAboveTheLevel) {
  SetLevel(Level::kWarn);
  ::testing::internal::CaptureStderr();
  Info("hidden {}", 1);
  Warn("CUPTI is already in use by {}", "nsys");
  Error("bad {} of {}", 2, 3);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "numtrace: CUPTI is already in use by nsys\nnumtrace: bad 2 of 3\n");
}

TEST_F(LogTest, OffSilencesEverything) {
  SetLevel(Level::kOff);
  ::testing::internal::CaptureStderr();
  Error("x");
  Write(Level::kOff, "y");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(LogTest, DebugShowsWhenAsked) {
  SetLevel("debug");
  ::testing::internal::CaptureStderr();
  Debug("launch {}", "gemm");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "numtrace: launch gemm\n");
}

}  // namespace
}  // namespace numtrace::shim::log
