// File: shim/cupti/callback_switchboard.cc
//
// Dispatch of CUPTI callbacks to the engine; see callback_switchboard.h.
#include "shim/cupti/callback_switchboard.h"

#include <cuda.h>

#include <vector>

#include "shim/cupti/alloc_decoder.h"
#include "shim/cupti/launch_capture_state.h"
#include "shim/cupti/launch_decoder.h"
#include "shim/cupti/measurement_pause.h"
#include "shim/cupti/nvtx_decoder.h"
#include "shim/cupti/runtime_call_stack.h"
#include "shim/cupti/runtime_decoder.h"
#include "shim/driver/self_call_guard.h"
#include "shim/engine/capture_counters.h"

namespace numtrace::shim {
namespace {

constexpr uint32_t kLaunchIds[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};
constexpr uint32_t kGraphIds[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
constexpr uint32_t kProfilerIds[] = {
    CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
    CUPTI_DRIVER_TRACE_CBID_cuProfilerStop,
};
constexpr uint32_t kPoolTrimIds[] = {CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo};
constexpr uint32_t kResourceIds[] = {
    CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
};

const std::vector<uint32_t>& AllDriverIds() {
  static const std::vector<uint32_t> ids = [] {
    std::vector<uint32_t> v(std::begin(kLaunchIds), std::end(kLaunchIds));
    v.insert(v.end(), std::begin(kGraphIds), std::end(kGraphIds));
    v.insert(v.end(), std::begin(kProfilerIds), std::end(kProfilerIds));
    v.insert(v.end(), std::begin(kPoolTrimIds), std::end(kPoolTrimIds));
    for (uint32_t id : AllocCallbackIds()) v.push_back(id);
    return v;
  }();
  return ids;
}

bool Succeeded(const CUpti_CallbackData& d) {
  return d.functionReturnValue != nullptr &&
         *static_cast<const CUresult*>(d.functionReturnValue) == CUDA_SUCCESS;
}

// Runtime calls return cudaError_t; cudaSuccess is 0 like CUDA_SUCCESS.
bool RuntimeSucceeded(const CUpti_CallbackData& d) {
  return d.functionReturnValue != nullptr && *static_cast<const int*>(d.functionReturnValue) == 0;
}

void Count(Counter c) { CaptureCounters::Get().Add(c); }

CallKind DriverKind(uint32_t cbid) {
  if (IsKernelLaunchId(cbid) || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
      cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) {
    return CallKind::kLaunch;
  }
  for (uint32_t id : AllocCallbackIds()) {
    if (id == cbid) return CallKind::kAlloc;
  }
  return CallKind::kOther;
}

uint64_t ContextOf(const CUpti_CallbackData& d) { return reinterpret_cast<uint64_t>(d.context); }

// The engine may offer a "before" hook (OnLaunchEnter); call it when it does.
template <typename Sink>
constexpr bool kHasEnter = requires(Sink* s, const LaunchEvent& e) { s->OnLaunchEnter(e); };

template <typename Sink>
void CallEnter(Sink* sink, const LaunchEvent& e) {
  if constexpr (kHasEnter<Sink>) sink->OnLaunchEnter(e);
}

// Per-thread scratch: the packed parameter bytes of the launch in flight.
// Grows to the largest kernel seen and is then reused: no allocation per launch.
thread_local std::vector<uint8_t> t_params;
thread_local KernelDescription t_uncached;  // when the cache cannot hold an entry
const KernelDescription kNoLayout{};       // runtime launches named by a host stub

}  // namespace

CallbackSwitchboard::CallbackSwitchboard(DriverQueries* queries, Hooks hooks)
    : queries_(queries), hooks_(hooks) {
  for (uint32_t id : kLaunchIds) handlers_[id] = &OnKernelLaunch;
  for (uint32_t id : kGraphIds) handlers_[id] = &OnGraphLaunch;
  for (uint32_t id : kProfilerIds) handlers_[id] = &OnProfiler;
  for (uint32_t id : kPoolTrimIds) handlers_[id] = &OnPoolTrim;
  for (uint32_t id : AllocCallbackIds()) handlers_[id] = &OnAllocOrFree;
}

std::span<const uint32_t> CallbackSwitchboard::DriverIds() { return AllDriverIds(); }
std::span<const uint32_t> CallbackSwitchboard::RuntimeIds() { return RuntimeWitnessIds(); }
std::span<const uint32_t> CallbackSwitchboard::ResourceIds() { return kResourceIds; }
std::span<const uint32_t> CallbackSwitchboard::NvtxIds() { return NvtxRangeIds(); }

void CUPTIAPI CallbackSwitchboard::Callback(void* userdata, CUpti_CallbackDomain domain,
                                            CUpti_CallbackId cbid, const void* cbdata) {
  static_cast<CallbackSwitchboard*>(userdata)->Dispatch(domain, cbid, cbdata);
}

void CallbackSwitchboard::Dispatch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void* cbdata) {
  if (SelfCallGuard::Active() || cbdata == nullptr) return;
  SelfCallGuard guard;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (cbid >= handlers_.size() || handlers_[cbid] == nullptr) return;
    const auto& d = *static_cast<const CUpti_CallbackData*>(cbdata);
    // The innermost runtime call on this thread (if any) was served by the driver.
    RuntimeCallStack::NoteDriver(DriverKind(cbid), d.correlationId);
    handlers_[cbid](*this, cbid, d);
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    OnRuntime(cbid, *static_cast<const CUpti_CallbackData*>(cbdata));
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto& r = *static_cast<const CUpti_ResourceData*>(cbdata);
    uint64_t ctx = reinterpret_cast<uint64_t>(r.context);
    // Bookkeeping only: no CUDA call inside the context callbacks of ours
    // beyond finishing and freeing what we prepared in a dying context.
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      Count(Counter::kContextsCreated);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING &&
               hooks_.context_destroying != nullptr && sink_.load(std::memory_order_acquire)) {
      hooks_.context_destroying(ctx);
    }
  } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
    OnNvtx(cbid, cbdata);
  }
}

void CallbackSwitchboard::OnRuntime(uint32_t cbid, const CUpti_CallbackData& d) {
  if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020) {
    // Whether the driver's trim callback fires inside it is not known
    // [D]: both clear the cache (twice is harmless).
    if (d.callbackSite == CUPTI_API_EXIT && RuntimeSucceeded(d)) {
      Count(Counter::kPoolTrims);
      if (EventSink* sink = sink_.load(std::memory_order_acquire)) sink->OnPoolTrim();
    }
    return;
  }
  if (d.callbackSite == CUPTI_API_ENTER) {
    RuntimeCallStack::Push(cbid, IsRuntimeLaunchId(cbid) ? CallKind::kLaunch : CallKind::kAlloc,
                           d.correlationId);
    return;
  }
  RuntimeFrame f = RuntimeCallStack::Pop(cbid, d.correlationId);
  bool launch = IsRuntimeLaunchId(cbid);
  if (launch) Count(Counter::kRuntimeLaunches);
  if (!f.found || !RuntimeSucceeded(d)) return;
  if (f.driver_seen) {
    if (f.correlation_differs && launch) {
      Count(Counter::kRuntimeCorrelationDiffers);
      // The kernel's activity record may carry either id.
      if (check_ != nullptr && window_open_.load(std::memory_order_relaxed)) {
        check_->NoteLaunch(f.correlation);
      }
    }
    return;
  }
  RuntimeWithoutDriver(cbid, d);
}

void CallbackSwitchboard::RuntimeWithoutDriver(uint32_t cbid, const CUpti_CallbackData& d) {
  EventSink* sink = EnsureSink(ContextOf(d));
  if (IsRuntimeAllocId(cbid)) {
    std::optional<FreeEvent> f = DecodeRuntimeFree(cbid, d.functionParams);
    std::optional<AllocEvent> a;
    if (!f) a = DecodeRuntimeAlloc(cbid, d.functionParams, queries_->DeviceOf(ContextOf(d)));
    if (!f && !a) return;  // cudaFree(nullptr) and the like: nothing to track
    Count(Counter::kRuntimeAllocsWithoutDriver);
    if (sink != nullptr) DeliverAlloc(sink, a, f);
    return;
  }
  Count(Counter::kRuntimeWithoutDriver);
  if (sink == nullptr) return;
  std::optional<RuntimeLaunch> l = ExtractRuntimeLaunch(cbid, d.functionParams);
  if (!l) return;
  Count(Counter::kRuntimeDecoded);
  // EXIT only: at ENTER nobody knew the driver would stay silent.
  HandleLaunch(l->args, d, /*enter=*/false, l->handle);
}

void CallbackSwitchboard::TrackWindow(bool quiet, uint32_t correlation) {
  if (check_ == nullptr) return;
  // Bookkeeping only: no CUPTI call here (activity kinds are enabled once,
  // from the writer's thread). One thread flips the window; the others see
  // it already flipped.
  if (!quiet && !window_open_.load(std::memory_order_relaxed) && !window_open_.exchange(true)) {
    check_->Window(true, correlation);
  } else if (quiet && window_open_.load(std::memory_order_relaxed) && window_open_.exchange(false)) {
    check_->Window(false, correlation);
  }
}

void CallbackSwitchboard::OnNvtx(uint32_t cbid, const void* cbdata) {
  // No engine start from NVTX: there is no context yet to measure in.
  EventSink* sink = sink_.load(std::memory_order_acquire);
  if (sink == nullptr) return;
  const auto& d = *static_cast<const CUpti_NvtxData*>(cbdata);
  std::optional<NvtxRange> r = DecodeNvtxRange(cbid, d.functionParams);
  if (!r) return;
  Count(Counter::kNvtxRanges);
  if (r->push) {
    sink->OnRangePush(r->name);
  } else {
    sink->OnRangePop();
  }
}

EventSink* CallbackSwitchboard::EnsureSink(uint64_t context) {
  if (EventSink* s = sink_.load(std::memory_order_acquire)) return s;
  if (hooks_.start == nullptr) return nullptr;
  int expected = 0;
  // One thread starts the engine; others drop their event meanwhile rather
  // than wait inside the application's launch.
  if (!start_state_.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    return nullptr;
  }
  EventSink* s = hooks_.start(context);
  sink_.store(s, std::memory_order_release);
  start_state_.store(2, std::memory_order_release);
  return s;
}

const KernelDescription& CallbackSwitchboard::Describe(uint64_t function, HandleKind kind,
                                                       const char* symbol, bool check_reuse,
                                                       bool* known) {
  *known = true;
  const KernelDescription* cached = kernels_.Find(function);
  // A handle reused by another kernel after a module unload: its name
  // changed, so its layout must be asked again (never the old one).
  const bool named = symbol != nullptr && symbol[0] != '\0';
  if (cached != nullptr && (!check_reuse || !named || cached->symbol.empty() ||
                            cached->symbol == symbol)) {
    return *cached;
  }
  auto info = std::make_unique<KernelDescription>();
  if (!queries_->Describe(function, kind, info.get())) {
    *known = false;  // counted by the caller, once per launch (at EXIT)
    t_uncached = KernelDescription{};
    return t_uncached;  // not cached: a later launch may succeed
  }
  if (named) info->symbol = symbol;
  // A different name under a cached handle: the handle was reused.
  const KernelDescription* k = cached != nullptr ? kernels_.Replace(function, std::move(info))
                                                 : kernels_.Insert(function, std::move(info));
  if (k != nullptr) return *k;
  t_uncached = KernelDescription{};  // function 0: never cached
  queries_->Describe(function, kind, &t_uncached);
  return t_uncached;
}

void CallbackSwitchboard::OnKernelLaunch(CallbackSwitchboard& self, uint32_t cbid,
                                         const CUpti_CallbackData& d) {
  bool enter = d.callbackSite == CUPTI_API_ENTER;
  if (enter && !kHasEnter<EventSink>) return;
  if (!enter && !Succeeded(d)) return;
  std::optional<LaunchArgs> args = ExtractLaunchArgs(cbid, d.functionParams);
  if (!args) return;
  if (!enter) Count(Counter::kDriverLaunches);
  self.HandleLaunch(*args, d, enter, HandleKind::kEither);
}

void CallbackSwitchboard::HandleLaunch(const LaunchArgs& args, const CUpti_CallbackData& d,
                                       bool enter, HandleKind handle) {
  if (MeasurementPause::Active()) {
    // An autotuner's benchmark: invisible, but its kernels are no unmeasured ones.
    if (enter) return;
    Count(Counter::kLaunchesPaused);
    if (check_ != nullptr && window_open_.load(std::memory_order_relaxed)) {
      check_->NoteLaunch(d.correlationId);
    }
    return;
  }
  EventSink* sink = EnsureSink(ContextOf(d));
  if (sink == nullptr) return;
  const bool quiet = sink->Quiet();
  // The reused-handle check compares names: only worth it when the layout
  // will be used (not on the quiet path, which must stay as cheap as it was).
  bool has_layout = handle != HandleKind::kNone;
  const KernelDescription& info =
      has_layout ? Describe(args.function, handle, d.symbolName, /*check_reuse=*/!quiet, &has_layout)
                 : kNoLayout;
  if (!has_layout && !enter) Count(Counter::kLaunchesNoLayout);
  TrackWindow(quiet, d.correlationId);
  if (quiet) {
    // Outside the captured steps: the engine only counts this launch, so skip
    // packing its parameters and asking the driver about stream capture.
    LaunchEvent e = MakeLaunchEvent(args, info, d.symbolName, {}, ContextOf(d), 0, false);
    e.layout = {};
    e.decoded = false;
    if (enter) {
      CallEnter(sink, e);
    } else {
      LaunchCaptureState::Forget();
      Count(Counter::kLaunchesSeen);
      sink->OnLaunch(e);
    }
    return;
  }
  if (check_ != nullptr) check_->NoteLaunch(d.correlationId);
  if (t_params.size() < info.param_bytes) t_params.resize(info.param_bytes);
  std::span<uint8_t> packed(t_params.data(), info.param_bytes);
  uint32_t valid = 0;
  PackResult pack = PackParams(args, info.layout, packed, &valid);
  if (pack == PackResult::kFailed) {
    if (!enter) Count(Counter::kParamsPackFailed);
    packed = {};
  } else if (pack == PackResult::kShort && !enter) {
    Count(Counter::kParamsExtraShort);
  }
  uint64_t stream = ResolveStream(args.raw_stream, args.per_thread);
  bool capturing = LaunchCaptureState::Resolve(d.correlationId, stream, [&] {
    Count(Counter::kCaptureQueries);
    return queries_->IsCapturing(stream);
  });
  if (!enter) LaunchCaptureState::Forget();
  int device = queries_->DeviceOf(ContextOf(d));
  LaunchEvent e = MakeLaunchEvent(args, info, d.symbolName, packed, ContextOf(d), device, capturing);
  if (packed.empty()) e.layout = {};  // no bytes: the engine must not read slots
  // A short `extra` buffer (NCCL >= 2.19: one 4 KiB ncclDevKernelArgs4K
  // parameter, of which only kernelArgsSize bytes are passed): the layout
  // stays whole and the bytes end where the caller's did. ScanBuffers clips
  // each slot to params.size(), so the pointers inside the one big slot are
  // scanned and nothing past the buffer is read.
  if (pack == PackResult::kShort) e.params = packed.first(valid);
  if (enter) {
    CallEnter(sink, e);
  } else {
    Count(Counter::kLaunchesSeen);
    sink->OnLaunch(e);
  }
}

void CallbackSwitchboard::OnGraphLaunch(CallbackSwitchboard& self, uint32_t cbid,
                                        const CUpti_CallbackData& d) {
  if (d.callbackSite != CUPTI_API_EXIT || !Succeeded(d)) return;
  if (MeasurementPause::Active()) {  // a benchmark replaying a graph (do_bench_cudagraph)
    Count(Counter::kLaunchesPaused);
    return;
  }
  EventSink* sink = self.EnsureSink(ContextOf(d));
  if (sink == nullptr) return;
  if (std::optional<GraphLaunchEvent> g = ExtractGraphLaunch(cbid, d.functionParams)) {
    Count(Counter::kGraphLaunches);
    sink->OnGraphLaunch(*g);
  }
}

void CallbackSwitchboard::OnAllocOrFree(CallbackSwitchboard& self, uint32_t cbid,
                                        const CUpti_CallbackData& d) {
  if (d.callbackSite != CUPTI_API_EXIT || !Succeeded(d)) return;
  EventSink* sink = self.EnsureSink(ContextOf(d));
  if (sink == nullptr) return;
  std::optional<FreeEvent> f = DecodeFree(cbid, d.functionParams);
  std::optional<AllocEvent> a;
  if (!f) a = DecodeAlloc(cbid, d.functionParams, self.queries_->DeviceOf(ContextOf(d)));
  self.DeliverAlloc(sink, a, f);
}

void CallbackSwitchboard::DeliverAlloc(EventSink* sink, std::optional<AllocEvent> a,
                                       std::optional<FreeEvent> f) {
  if (f) {
    sink->OnFree(*f);
  } else if (a) {
    sink->OnAlloc(*a);
  }
}

void CallbackSwitchboard::OnPoolTrim(CallbackSwitchboard& self, uint32_t,
                                     const CUpti_CallbackData& d) {
  if (d.callbackSite != CUPTI_API_EXIT || !Succeeded(d)) return;
  Count(Counter::kPoolTrims);
  if (EventSink* sink = self.sink_.load(std::memory_order_acquire)) sink->OnPoolTrim();
}

void CallbackSwitchboard::OnProfiler(CallbackSwitchboard& self, uint32_t cbid,
                                     const CUpti_CallbackData& d) {
  if (d.callbackSite != CUPTI_API_EXIT || !Succeeded(d)) return;
  EventSink* sink = self.EnsureSink(ContextOf(d));
  if (sink == nullptr) return;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) {
    sink->OnProfilerStart();
  } else {
    sink->OnProfilerStop();
  }
}

}  // namespace numtrace::shim
