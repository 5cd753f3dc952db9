// File: shim/cupti/cupti_session.cc
//
// Subscription lifetime; see cupti_session.h.
#include "shim/cupti/cupti_session.h"

#include <cupti.h>

#include "shim/cupti/callback_switchboard.h"
#include "shim/cupti/check.h"
#include "shim/cupti/cupti_api.h"
#include "shim/cupti/driver_api.h"
#include "shim/cupti/driver_queries.h"
#include "shim/cupti/library_finder.h"
#include "shim/cupti/self_call_guard.h"

namespace numtrace::shim {

std::string FormatHeldMessage(std::string_view holder) {
  std::string who = holder.empty() ? std::string("another CUPTI client") : std::string(holder);
  return "CUPTI is already in use by " + who +
         " (one subscriber per process in CUPTI 13.0); numtrace is not capturing this process."
         " Run without the profiler/debugger to capture.";
}

std::string NvtxInjectionPath() {
  for (const std::string& path : CuptiCandidates(LibrarySearchFromProcess("NUMTRACE_CUPTI_LIB"))) {
    if (!path.empty() && path[0] == '/') return path;
  }
  return {};
}

CuptiSession& CuptiSession::Get() {
  static CuptiSession* session = new CuptiSession();  // callbacks may run during exit
  return *session;
}

SessionState CuptiSession::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

SessionState CuptiSession::Start(const SessionHooks& hooks) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != SessionState::kOff) return state_;
  SelfCallGuard guard;  // our own driver calls below must not reach the switchboard
  std::string error;
  DriverApi& cu = DriverApi::Instance();
  if (!cu.Load(&error)) {
    LogLine("%s; not capturing", error.c_str());
    return state_ = SessionState::kNoDriver;
  }
  CuptiApi& cupti = CuptiApi::Instance();
  if (!cupti.Load(&error)) {
    LogLine("%s; not capturing", error.c_str());
    return state_ = SessionState::kNoCupti;
  }

  static LiveDriverQueries* queries = new LiveDriverQueries(cu);
  auto* board = new CallbackSwitchboard(
      queries, {hooks.start, hooks.context_destroying, hooks.context_created});
  board_ = board;

  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "numtrace";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult r = cupti.cuptiSubscribe_v2(&sub, &CallbackSwitchboard::Callback, board, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    LogLine("%s", FormatHeldMessage(holder).c_str());
    return state_ = SessionState::kHeldByOther;
  }
  if (!NUMTRACE_CUPTI_CHECK(r)) {
    LogLine("cannot subscribe to CUPTI (%s); not capturing", cupti.path.c_str());
    return state_ = SessionState::kFailed;
  }
  subscriber_ = sub;
  bool ok = true;
  for (uint32_t id : CallbackSwitchboard::DriverIds()) {
    ok &= NUMTRACE_CUPTI_CHECK(cupti.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id));
  }
  for (uint32_t id : CallbackSwitchboard::ResourceIds()) {
    ok &= NUMTRACE_CUPTI_CHECK(cupti.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, id));
  }
  if (hooks.nvtx_ranges) {
    for (uint32_t id : CallbackSwitchboard::NvtxIds()) {
      ok &= NUMTRACE_CUPTI_CHECK(cupti.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_NVTX, id));
    }
  }
  if (!ok) {
    cupti.cuptiUnsubscribe(sub);
    subscriber_ = nullptr;
    LogLine("cannot enable CUPTI callbacks; not capturing");
    return state_ = SessionState::kFailed;
  }
  return state_ = SessionState::kActive;
}

void CuptiSession::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != SessionState::kActive) return;
  CuptiApi::Instance().cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
  subscriber_ = nullptr;
  state_ = SessionState::kStopped;
}

}  // namespace numtrace::shim
