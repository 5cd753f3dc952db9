// File: test/shim/cupti/cupti_session_test.cc
//
// The one line printed when another tool holds CUPTI, and the session's
// behaviour on a machine without a driver (this one): inert, one line.
#include "shim/cupti/cupti_session.h"

#include <gtest/gtest.h>

namespace numtrace::shim {
namespace {

TEST(CuptiSession, HeldMessageNamesHolder) {
  std::string m = FormatHeldMessage("CUPTI for Kineto");
  EXPECT_NE(m.find("CUPTI for Kineto"), std::string::npos) << m;
  EXPECT_NE(m.find("not capturing"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";
}

TEST(CuptiSession, HeldMessageWithoutHolderName) {
  std::string m = FormatHeldMessage("");
  EXPECT_NE(m.find("another CUPTI client"), std::string::npos) << m;
}

TEST(CuptiSession, StartIsIdempotentAndInertWithoutDriver) {
  ::testing::internal::CaptureStderr();
  SessionState first = CuptiSession::Get().Start({});
  SessionState second = CuptiSession::Get().Start({});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(first, second);
  if (first == SessionState::kNoDriver) {
    EXPECT_NE(err.find("numtrace: "), std::string::npos);
    EXPECT_EQ(err.find('\n'), err.size() - 1) << "exactly one line: " << err;
  } else {
    GTEST_SKIP() << "a driver is present here (state " << static_cast<int>(first) << ")";
  }
  CuptiSession::Get().Stop();
}

}  // namespace
}  // namespace numtrace::shim
