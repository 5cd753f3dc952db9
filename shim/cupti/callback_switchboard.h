// File: shim/cupti/callback_switchboard.h
//
// The one CUPTI callback of numtrace and its fixed dispatch table (kineto's
// CuptiCallbackApi pattern): a plain array from driver callback id to
// handler, so a launch costs one indexed load, no map lookup and no lock.
// Handlers decode the callback data (launch_decoder.h, alloc_decoder.h) and
// call the engine's EventSink: launches at EXIT when the call succeeded (and
// at ENTER through OnLaunchEnter when the engine has it), allocations and
// frees at EXIT, cuProfilerStart/Stop, NVTX range push/pop (NVTX domain,
// nvtx_decoder.h), and the contexts (resource domain): the first starts the
// engine through a hook, every later one is prepared through another hook
// (device memory is set up there, never on the launch path).
//
// A launch asks cuStreamIsCapturing once: at ENTER, reused at EXIT
// (launch_capture_state.h), and visible to CudaDevice::Enqueue meanwhile.
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
#include <span>

#include "shim/cupti/driver_queries.h"
#include "shim/cupti/kernel_info_cache.h"
#include "shim/engine/event_sink.h"

namespace numtrace::shim {

class CallbackSwitchboard {
 public:
  struct Hooks {
    // Called once, on the first context (or the first event, should the
    // context callback have been missed), with the self-call guard held.
    // Returns the sink to feed, or null to stay inert.
    EventSink* (*start)(uint64_t context) = nullptr;
    // A context is about to be destroyed: finish work queued in it.
    void (*context_destroying)(uint64_t context) = nullptr;
    // A context was created after the engine started (the first one is
    // handled by `start`): prepare it.
    void (*context_created)(uint64_t context) = nullptr;
  };

  struct Counters {
    std::atomic<uint64_t> launches{0};       // kernel launches seen (success)
    std::atomic<uint64_t> undescribed{0};    // launches whose layout the driver did not give
    std::atomic<uint64_t> unpacked{0};       // launches whose parameter bytes could not be read
    std::atomic<uint64_t> capture_queries{0};  // cuStreamIsCapturing calls made
    std::atomic<uint64_t> ranges{0};         // NVTX pushes and pops passed on
  };

  CallbackSwitchboard(DriverQueries* queries, Hooks hooks);

  // The sink to feed from now on (tests; Hooks::start sets it in the shim).
  void SetSink(EventSink* sink) { sink_.store(sink, std::memory_order_release); }

  // The CUpti_CallbackFunc to subscribe with; `userdata` is the switchboard.
  static void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata);
  void Dispatch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);

  // Ids to enable: driver, resource and (NVTX step mode) NVTX domains.
  static std::span<const uint32_t> DriverIds();
  static std::span<const uint32_t> ResourceIds();
  static std::span<const uint32_t> NvtxIds();

  const Counters& counters() const { return counters_; }

 private:
  using Handler = void (*)(CallbackSwitchboard&, uint32_t cbid, const CUpti_CallbackData&);
  static void OnKernelLaunch(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  static void OnGraphLaunch(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  static void OnAllocOrFree(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  static void OnProfiler(CallbackSwitchboard&, uint32_t, const CUpti_CallbackData&);
  void OnNvtx(uint32_t cbid, const void* cbdata);

  // The sink, starting the engine on first use; null while inert.
  EventSink* EnsureSink(uint64_t context);
  const KernelInfo& Describe(uint64_t function);

  DriverQueries* queries_;
  Hooks hooks_;
  std::atomic<EventSink*> sink_{nullptr};
  std::atomic<int> start_state_{0};  // 0 not started, 1 starting, 2 done
  std::array<Handler, CUPTI_DRIVER_TRACE_CBID_SIZE> handlers_{};
  KernelInfoCache kernels_;
  Counters counters_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_CALLBACK_SWITCHBOARD_H_
