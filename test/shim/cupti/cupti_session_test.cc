// File: test/shim/cupti/cupti_session_test.cc
//
// The one line printed when another tool holds CUPTI, and the session's
// behaviour on a machine without a driver (this one): inert, one line.
#include "shim/cupti/cupti_session.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shim/cupti/cupti_api.h"
#include "test/shim/cupti/recording_sink.h"

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

CUptiResult g_state_result = CUPTI_SUCCESS;
uint32_t g_state_enabled = 1;
CUptiResult CallbackState(uint32_t* enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                          CUpti_CallbackId id) {
  EXPECT_EQ(domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(id, static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  *enable = g_state_enabled;
  return g_state_result;
}
CUptiResult ResultString(CUptiResult, const char** s) {
  *s = "CUPTI_ERROR_NOT_INITIALIZED";
  return CUPTI_SUCCESS;
}

// Another tool's cuptiFinalize() removes numtrace's subscription: launches
// stop raising callbacks and the trace just ended early, silently. Now the
// writer's thread asks CUPTI for the launch callback's state and says it
// once, on stderr and as a trace note.
TEST(SubscriptionWatch, ALostSubscriptionIsSaidOnce) {
  CuptiApi api;
  api.cuptiGetCallbackState = &CallbackState;
  api.cuptiGetResultString = &ResultString;
  RecordingSink sink;
  SubscriptionWatch watch;
  g_state_result = CUPTI_SUCCESS;
  g_state_enabled = 1;
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(watch.Check(api, nullptr, &sink));
  g_state_result = CUPTI_ERROR_NOT_INITIALIZED;  // finalized under us
  EXPECT_FALSE(watch.Check(api, nullptr, &sink));
  EXPECT_FALSE(watch.Check(api, nullptr, &sink));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("subscription is gone (CUPTI answers CUPTI_ERROR_NOT_INITIALIZED"), std::string::npos) << err;
  ASSERT_EQ(sink.warnings.size(), 1u);
  EXPECT_NE(sink.warnings[0].find("later launches are not captured"), std::string::npos);

  SubscriptionWatch off;  // answered, but the callback is disabled
  g_state_result = CUPTI_SUCCESS;
  g_state_enabled = 0;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(off.Check(api, nullptr, nullptr));
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("its launch callback is off"), std::string::npos) << err;
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
