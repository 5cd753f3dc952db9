// File: shim/cupti/cupti_session.h
//
// The lifetime of numtrace's CUPTI subscription, behind a header free of
// CUDA/CUPTI types (shim/api/injection.cc includes it). Start loads libcupti
// and libcuda (library_finder.h), subscribes as "numtrace" with
// cuptiSubscribe_v2 (plain cuptiSubscribe with a CUPTI 12 copy) and enables
// the driver and resource callbacks of CallbackSwitchboard. Whatever goes wrong, the job keeps running: Start
// prints at most ONE "numtrace: ..." line and the session stays inert.
// CUPTI 13.0 allows one subscriber per process: when torch.profiler,
// Nsight or cuda-gdb holds it, the line names the holder.
//
// Example:
//   SessionState s = CuptiSession::Get().Start({.start = &StartEngine});
//   if (s != SessionState::kActive) return;  // message already printed
//   ...
//   CuptiSession::Get().Stop();  // unsubscribe before the engine shuts down
#ifndef NUMTRACE_SHIM_CUPTI_CUPTI_SESSION_H_
#define NUMTRACE_SHIM_CUPTI_CUPTI_SESSION_H_

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shim/engine/event_sink.h"

namespace numtrace::shim {

enum class SessionState : uint8_t {
  kOff,          // Start not called yet
  kActive,       // subscribed; callbacks flow
  kHeldByOther,  // another CUPTI subscriber holds the process
  kNoCupti,      // libcupti not found or too old
  kNoDriver,     // libcuda.so.1 missing or too old
  kFailed,       // CUPTI refused (message printed)
  kStopped,      // unsubscribed
};

struct SessionHooks {
  // First launch or allocation: start the engine and return its sink (null: inert).
  EventSink* (*start)(uint64_t context) = nullptr;
  // A context is about to be destroyed.
  void (*context_destroying)(uint64_t context) = nullptr;
  // Enable the NVTX range callbacks (NUMTRACE_STEP_MODE=nvtx:...). They
  // only flow when NVTX_INJECTION64_PATH names libcupti (see
  // NvtxInjectionPath) before the job's first NVTX call.
  bool nvtx_ranges = false;
  // The kernel activity check (NUMTRACE_ACTIVITY; kernel_activity.h). Off:
  // no activity record is ever enabled, unmeasured kernels are not counted.
  bool activity = true;
};

struct CuptiApi;
// Enables every callback of `ids` in `domain` that CUPTI accepts (it does
// not stop at the first refusal) and returns the refused ids, in order.
std::vector<uint32_t> EnableEach(const CuptiApi& api, void* subscriber, int domain,
                                 std::span<const uint32_t> ids);
// "1, 2, 3" for the one line that lists refused ids.
std::string JoinIds(std::span<const uint32_t> ids);

// The value to give NVTX_INJECTION64_PATH so NVTX reports to CUPTI: the
// libcupti already loaded in the process, else the first one the search
// order of library_finder.h finds. Empty when none is found. Loads nothing.
std::string NvtxInjectionPath();

// The one line printed when another tool holds CUPTI. `holder` is CUPTI's
// oldSubscriberName (may be empty when CUPTI did not say).
std::string FormatHeldMessage(std::string_view holder);

// Watches, from the writer's thread (never a callback), that numtrace's
// subscription still stands: CUPTI's state of its cuLaunchKernel callback.
// Another tool's cuptiFinalize() removes every subscriber (kineto's
// TEARDOWN_CUPTI=1 path first needs a subscription of its own, which it
// cannot get while numtrace holds the slot - docs/gpu.md - but other tools
// may not ask). The first time it is gone: one stderr line and a trace note
// (later launches raise no callback: the trace just ends early otherwise).
class SubscriptionWatch {
 public:
  // True while the subscription stands.
  bool Check(const CuptiApi& api, void* subscriber, EventSink* sink);

 private:
  bool said_ = false;
};

class CuptiSession {
 public:
  static CuptiSession& Get();

  // Idempotent: later calls return the first call's state. Thread-safe.
  SessionState Start(const SessionHooks& hooks);
  // Process exit, before the engine's footer: flushes the kernel activity
  // records and reports kernels that ran unmeasured to `sink`.
  void FinishActivity(EventSink* sink);
  // Every tick of the writer's thread (never inside a callback): enables
  // the activity kinds the first time, and after a captured step
  // (`step_ended`) flushes and reports; at step ends and once a second
  // checks that the subscription stands (SubscriptionWatch).
  void WriterTick(EventSink* sink, bool step_ended);
  // Unsubscribes (callbacks stop before this returns). Safe to call twice.
  void Stop();
  SessionState state() const;

 private:
  mutable std::mutex mu_;
  SessionState state_ = SessionState::kOff;
  void* subscriber_ = nullptr;  // CUpti_SubscriberHandle
  void* board_ = nullptr;       // CallbackSwitchboard*, leaked on purpose
  void* activity_ = nullptr;    // KernelActivity*, leaked on purpose
  SubscriptionWatch watch_;     // WriterTick's (the writer's thread only)
  uint32_t ticks_ = 0;          // WriterTick's
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_CUPTI_SESSION_H_
