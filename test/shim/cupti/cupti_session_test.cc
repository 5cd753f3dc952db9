// File: test/shim/cupti/cupti_session_test.cc
//
// The one line printed when another tool holds CUPTI, and the session's
// behaviour on a machine without a driver (this one): inert, one line.
#include "shim/cupti/cupti_session.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <vector>

#include "shim/cupti/cupti_api.h"

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

std::vector<uint32_t> g_asked;
CUptiResult RefuseOdd(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId id) {
  g_asked.push_back(id);
  return id % 2 == 1 ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_SUCCESS;
}

// The runtime-witness loop used to stop at the first refused id: every id
// after it stayed disabled although CUPTI would have taken it.
TEST(CuptiSession, EnableEachAsksForEveryIdAndNamesTheRefusedOnes) {
  CuptiApi api;
  api.cuptiEnableCallback = &RefuseOdd;
  g_asked.clear();
  const uint32_t ids[] = {10, 11, 12, 13, 14};
  std::vector<uint32_t> refused = EnableEach(api, nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, ids);
  EXPECT_EQ(g_asked, (std::vector<uint32_t>{10, 11, 12, 13, 14})) << "none skipped after a refusal";
  EXPECT_EQ(refused, (std::vector<uint32_t>{11, 13}));
  EXPECT_EQ(JoinIds(refused), "11, 13");
}

}  // namespace
}  // namespace numtrace::shim
