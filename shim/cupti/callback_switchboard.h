// File: shim/cupti/callback_switchboard.h
//
// The one CUPTI callback of numtrace and its fixed dispatch tables (kineto's
// CuptiCallbackApi pattern): plain arrays from callback id to handler, so a
// launch costs one indexed load, no map lookup and no lock. Handlers decode
// the callback data (launch_decoder.h, alloc_decoder.h, runtime_decoder.h)
// and call the engine's EventSink: launches at EXIT when the call succeeded
// (and at ENTER through OnLaunchEnter), allocations and frees at EXIT,
// cuProfilerStart/Stop, NVTX range push/pop (NVTX domain, nvtx_decoder.h).
//
// Launch paths. Driver launch ids (cuLaunchKernel, Ex, Cooperative, each
// with _ptsz) do the work. Runtime launch and allocation ids are enabled as
// witnesses (runtime_call_stack.h): a driver callback nested in a runtime
// call is handled as usual; a runtime call that completes with none is
// counted (runtime_without_driver) and decoded from its own parameters
// (runtime_decoder.h). Which path fires on a given GPU is then read from the
// footer counters (capture_counters.h), not guessed.
//
// Contexts (resource domain): bookkeeping only. No CUDA work happens in
// CONTEXT_CREATED (tools that allocate there deadlock); the engine starts at
// the first launch or allocation, and CudaDevice prepares a context at the
// first measurement in it (cuda_device.h). CONTEXT_DESTROY_STARTING lets the
// device finish and free what it prepared in that context.
//
// Kernel activity check: while the engine is not quiet, every handled
// launch's correlation id is noted (kernel_activity_check.h); the first
// captured launch opens the check's window and the first quiet one closes
// it. No CUPTI call and no lock held elsewhere across a CUPTI or driver
// call is taken here: activity records are enabled once, off the callback
// path (kernel_activity.h).
//
// A launch asks cuStreamIsCapturing once: at ENTER, reused at EXIT
// (launch_capture_state.h); the answer reaches the engine only as
// LaunchEvent::stream_capturing.
//
// Tests call Dispatch() directly with fake CUpti_CallbackData built from
// the real parameter structs, and a fake DriverQueries.
//
// Example:
//   CallbackSwitchboard board(&queries, {.start = &StartEngine});
//   api.cuptiSubscribe_v2(&sub, &CallbackSwitchboard::Callback, &board, &params);
//   for (uint32_t id : CallbackSwitchboard::DriverIds()) enable(id);
#ifndef NUMTRACE_SHIM_CUPTI_CALLBACK_SWITCHBOARD_H_
#define NUMTRACE_SHIM_CUPTI_CALLBACK_SWITCHBOARD_H_

#include <cupti.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>

#include "shim/driver/driver_queries.h"
#include "shim/cupti/kernel_activity_check.h"
#include "shim/cupti/kernel_info_cache.h"
#include "shim/engine/event_sink.h"

namespace numtrace::shim {

class CallbackSwitchboard {
 public:
  struct Hooks {
    // Called once, at the first launch or allocation callback (never in a
    // context callback), with the self-call guard held.
    // Returns the sink to feed, or null to stay inert.
    EventSink* (*start)(uint64_t context) = nullptr;
    // A context is about to be destroyed: finish work queued in it.
    void (*context_destroying)(uint64_t context) = nullptr;
  };

  CallbackSwitchboard(DriverQueries* queries, Hooks hooks);

  // The sink to feed from now on (tests; Hooks::start sets it in the shim).
  void SetSink(EventSink* sink) { sink_.store(sink, std::memory_order_release); }
  // The kernel activity check to feed (optional; outlives the board). The
  // board only notes launches and captured windows in it: no CUPTI call.
  void SetActivityCheck(KernelActivityCheck* check) { check_ = check; }

  // The CUpti_CallbackFunc to subscribe with; `userdata` is the switchboard.
  static void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata);
  void Dispatch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);

  // Ids to enable: driver, runtime (witnesses), resource and (NVTX step
  // mode) NVTX domains.
  static std::span<const uint32_t> DriverIds();
  static std::span<const uint32_t> RuntimeIds();
  static std::span<const uint32_t> ResourceIds();
  static std::span<const uint32_t> NvtxIds();

 private:
  using Handler = void (*)(CallbackSwitchboard&, uint32_t cbid, const CUpti_CallbackData&);
  static void OnKernelLaunch(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  // Both launch paths end here: `handle` kNone for a runtime launch whose
  // function is a host stub (no layout to ask the driver for).
  void HandleLaunch(const LaunchArgs& args, const CUpti_CallbackData& d, bool enter,
                    HandleKind handle);
  void OnRuntime(uint32_t cbid, const CUpti_CallbackData& d);
  void RuntimeWithoutDriver(uint32_t cbid, const CUpti_CallbackData& d);
  void DeliverAlloc(EventSink* sink, std::optional<AllocEvent> a, std::optional<FreeEvent> f);
  // Marks the check's captured window open or closed as the engine leaves
  // or enters quiet, at the launch with `correlation`.
  void TrackWindow(bool quiet, uint32_t correlation);
  static void OnGraphLaunch(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  static void OnAllocOrFree(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  static void OnProfiler(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  static void OnPoolTrim(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  void OnNvtx(uint32_t cbid, const void* cbdata);

  // The sink, starting the engine on first use; null while inert.
  EventSink* EnsureSink(uint64_t context);
  // `check_reuse`: compare the cached entry's name with `symbol` (skipped
  // on the quiet path, where the layout is not used). `known` false: the
  // driver gave no layout (the caller counts launches_no_layout at EXIT).
  const KernelDescription& Describe(uint64_t function, HandleKind kind, const char* symbol,
                                    bool check_reuse, bool* known);

  DriverQueries* queries_;
  Hooks hooks_;
  std::atomic<EventSink*> sink_{nullptr};
  std::atomic<int> start_state_{0};  // 0 not started, 1 starting, 2 done
  std::array<Handler, CUPTI_DRIVER_TRACE_CBID_SIZE> handlers_{};
  KernelInfoCache kernels_;
  KernelActivityCheck* check_ = nullptr;
  // Starts open like the check's first window (kernel_activity_check.h).
  std::atomic<bool> window_open_{true};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_CALLBACK_SWITCHBOARD_H_
