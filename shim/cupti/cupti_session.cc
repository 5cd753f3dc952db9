// File: shim/cupti/cupti_session.cc
//
// Subscription lifetime; see cupti_session.h.
#include "shim/cupti/cupti_session.h"

#include <cupti.h>

#include <span>
#include <string>

#include "shim/cupti/callback_switchboard.h"
#include "shim/log/log.h"
#include "shim/cupti/cupti_api.h"
#include "shim/driver/driver_api.h"
#include "shim/driver/driver_queries.h"
#include "shim/cupti/kernel_activity.h"
#include "shim/cupti/kernel_activity_check.h"
#include "shim/driver/library_finder.h"
#include "shim/driver/self_call_guard.h"
#include "shim/reduce/batch_abi.h"

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

std::vector<uint32_t> EnableEach(const CuptiApi& api, void* subscriber, int domain,
                                 std::span<const uint32_t> ids) {
  std::vector<uint32_t> refused;
  for (uint32_t id : ids) {
    if (api.cuptiEnableCallback(1, static_cast<CUpti_SubscriberHandle>(subscriber),
                                static_cast<CUpti_CallbackDomain>(domain), id) != CUPTI_SUCCESS) {
      refused.push_back(id);
    }
  }
  return refused;
}

std::string JoinIds(std::span<const uint32_t> ids) {
  std::string out;
  for (uint32_t id : ids) {
    if (!out.empty()) out += ", ";
    out += std::to_string(id);
  }
  return out;
}

namespace {

std::string ResultText(const CuptiApi& api, CUptiResult r) {
  const char* what = nullptr;
  if (api.cuptiGetResultString(r, &what) != CUPTI_SUCCESS || what == nullptr) what = "CUPTI error";
  return std::string(what) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

}  // namespace

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
    log::Warn("{}; not capturing", error);
    return state_ = SessionState::kNoDriver;
  }
  CuptiApi& cupti = CuptiApi::Instance();
  if (!cupti.Load(&error)) {
    log::Warn("{}; not capturing", error);
    return state_ = SessionState::kNoCupti;
  }

  static LiveDriverQueries* queries = new LiveDriverQueries(cu);
  auto* board = new CallbackSwitchboard(queries, {hooks.start, hooks.context_destroying});
  board_ = board;
  // Leaked on purpose like the board: CUPTI may deliver buffers during exit.
  if (hooks.activity) {
    auto* check = new KernelActivityCheck(kReduceBatchKernelName);
    activity_ = new KernelActivity(cupti, check);
    board->SetActivityCheck(check);
  }

  std::string holder;
  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult r = SubscribeAs(cupti, &sub, &CallbackSwitchboard::Callback, board, "numtrace", &holder);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    log::Warn("{}", FormatHeldMessage(holder));
    return state_ = SessionState::kHeldByOther;
  }
  if (r != CUPTI_SUCCESS) {
    log::Warn("cannot subscribe to CUPTI ({}): {}; not capturing", cupti.path, ResultText(cupti, r));
    return state_ = SessionState::kFailed;
  }
  subscriber_ = sub;
  // One line at most: the first refusal is the one reported.
  auto enable = [&](CUpti_CallbackDomain domain, std::span<const uint32_t> ids) {
    for (uint32_t id : ids) {
      if (r != CUPTI_SUCCESS) return;
      r = cupti.cuptiEnableCallback(1, sub, domain, id);
      if (r != CUPTI_SUCCESS) {
        log::Warn("cannot enable CUPTI callback {} of domain {}: {}; not capturing", id,
                  static_cast<int>(domain), ResultText(cupti, r));
      }
    }
  };
  enable(CUPTI_CB_DOMAIN_DRIVER_API, CallbackSwitchboard::DriverIds());
  enable(CUPTI_CB_DOMAIN_RESOURCE, CallbackSwitchboard::ResourceIds());
  if (hooks.nvtx_ranges) enable(CUPTI_CB_DOMAIN_NVTX, CallbackSwitchboard::NvtxIds());
  if (r != CUPTI_SUCCESS) {
    cupti.cuptiUnsubscribe(sub);
    subscriber_ = nullptr;
    return state_ = SessionState::kFailed;
  }
  // Runtime witnesses are optional: without them the driver ids still do
  // the work. Each one CUPTI accepts is enabled; the refused ones are named.
  std::vector<uint32_t> refused =
      EnableEach(cupti, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CallbackSwitchboard::RuntimeIds());
  if (!refused.empty()) {
    log::Warn("CUPTI refused {} of {} runtime callbacks (ids {}); launches through them are not "
              "witnessed (footer runtime_* counters are a lower bound)",
              refused.size(), CallbackSwitchboard::RuntimeIds().size(), JoinIds(refused));
  }
  return state_ = SessionState::kActive;
}

void CuptiSession::FinishActivity(EventSink* sink) {
  KernelActivity* activity;
  {
    std::lock_guard<std::mutex> lock(mu_);
    activity = static_cast<KernelActivity*>(activity_);
  }
  if (activity != nullptr) activity->Finish(sink);
}

bool SubscriptionWatch::Check(const CuptiApi& api, void* subscriber, EventSink* sink) {
  uint32_t enabled = 0;
  const CUptiResult r = api.cuptiGetCallbackState(&enabled, static_cast<CUpti_SubscriberHandle>(subscriber),
                                                  CUPTI_CB_DOMAIN_DRIVER_API,
                                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  if (r == CUPTI_SUCCESS && enabled != 0) return true;
  if (said_) return false;
  said_ = true;
  const std::string msg =
      "numtrace's CUPTI subscription is gone (CUPTI answers " +
      (r == CUPTI_SUCCESS ? std::string("its launch callback is off") : ResultText(api, r)) +
      "; another tool called cuptiFinalize?): later launches are not captured, the trace ends here";
  log::Warn("{}", msg);
  if (sink != nullptr) sink->OnWarning(msg);
  return false;
}

void CuptiSession::WriterTick(EventSink* sink, bool step_ended) {
  KernelActivity* activity;
  void* subscriber;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != SessionState::kActive) return;
    activity = static_cast<KernelActivity*>(activity_);
    subscriber = subscriber_;
  }
  // The writer ticks every 10 ms: about once a second, and at step ends.
  if (step_ended || ++ticks_ % 100 == 0) watch_.Check(CuptiApi::Instance(), subscriber, sink);
  if (activity == nullptr) return;
  // Once, here on the writer's thread: never inside an application call.
  if (!activity->open() && !activity->unavailable()) activity->Open();
  if (step_ended) {
    activity->StepEnded(sink);
  } else {
    activity->Watch(sink);
  }
}

void CuptiSession::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != SessionState::kActive) return;
  CuptiApi::Instance().cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
  subscriber_ = nullptr;
  state_ = SessionState::kStopped;
}

}  // namespace numtrace::shim
