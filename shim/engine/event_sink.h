// File: shim/engine/event_sink.h
//
// The narrow interface the CUDA-facing layer (shim/cupti/) calls. The engine
// implements it; tests and the simulated training loop call it directly, the
// same way the CUPTI callbacks do. Every method may be called from many host
// threads at once and must return quickly: OnLaunch is on the application's
// launch path.
#ifndef NUMTRACE_SHIM_ENGINE_EVENT_SINK_H_
#define NUMTRACE_SHIM_ENGINE_EVENT_SINK_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "shim/engine/device.h"
#include "shim/engine/events.h"

namespace numtrace::shim {

class EventSink {
 public:
  virtual ~EventSink() = default;

  // A kernel launch about to be made (callback ENTER), with the same fields
  // OnLaunch will get. The engine measures "before" here, on the launch's
  // stream, so stream order puts it ahead of the kernel. Optional for a
  // caller: without it buffers get role "unknown". Must be followed on the
  // same thread by OnLaunch for the same launch when the launch succeeds.
  virtual void OnLaunchEnter(const LaunchEvent& launch) {}
  // A kernel launch that succeeded (callback EXIT, CUDA_SUCCESS).
  virtual void OnLaunch(const LaunchEvent& launch) = 0;
  // True while no launch can be captured (outside the selected steps, or
  // after the last one). The caller may then skip the costly part of
  // decoding a launch - packing its parameters, asking the driver whether
  // the stream is capturing - and send a LaunchEvent with decoded = false.
  // OnLaunchEnter/OnLaunch must still be called: every launch is counted.
  virtual bool Quiet() const { return false; }
  virtual void OnAlloc(const AllocEvent& alloc) = 0;
  virtual void OnFree(const FreeEvent& free) = 0;
  virtual void OnGraphLaunch(const GraphLaunchEvent& graph) = 0;
  // cuMemPoolTrimTo / cudaMemPoolTrimTo: freed pool memory may be unmapped
  // now, and no free callback says which (cached driver ranges are stale).
  virtual void OnPoolTrim() {}
  // A framework allocator's block or segment (numtrace_tensor_event, fed by
  // the PyTorch hooks from the caching allocator's trace; tensor_map.h).
  // Called under that allocator's lock: must not block on anything else.
  virtual void OnTensorEvent(const TensorEvent& event) {}
  // Whether that feed is attached (numtrace_tensor_map_status); `detail`
  // one line. Only the first call counts.
  virtual void OnTensorMapStatus(TensorMapState state, std::string_view detail) {}
  // PyTorch's caching allocator is in the process (libc10_cuda is loaded,
  // no cudaMallocAsync backend) and NUMTRACE_ALLOCATOR=caching: a feed is
  // expected. If none has said anything by the end of the first captured
  // step (the hooks are not on PYTHONPATH), the engine says so, loudly.
  virtual void ExpectTensorMap() {}

  // Step and capture markers: numtrace_mark_step(), numtrace_capture_begin/end(),
  // cuProfilerStart/Stop, NVTX range push/pop (name; empty for a pop).
  virtual void OnStepMark() = 0;
  // numtrace_mark_step_to(next): a step mark that carries the job's own number
  // for the step that begins (StepTracker::Mark says how it is taken).
  virtual void OnStepMarkTo(int64_t next) { OnStepMark(); }
  virtual void OnCaptureBegin() = 0;
  virtual void OnCaptureEnd() = 0;
  virtual void OnProfilerStart() = 0;
  virtual void OnProfilerStop() = 0;
  virtual void OnRangePush(std::string_view name) = 0;
  virtual void OnRangePop() = 0;

  // Kernel `name` ran `count` times during captured steps without its
  // launch being seen (CUPTI activity records matched against the launch
  // callbacks, shim/cupti/kernel_activity_check.h); `in_graph`: inside a
  // CUDA graph launch. Written as a note of kind "unmeasured" and added to
  // the footer's `unmeasured`.
  virtual void OnUnmeasured(std::string_view name, uint64_t count, bool in_graph) {}
  // A condition of the CUDA layer the trace must carry (the stderr line
  // was said already): written as a note, e.g. another tool taking CUPTI's
  // activity buffers (shim/cupti/kernel_activity.h).
  virtual void OnWarning(std::string_view msg) {}

  // Operator level (NUMTRACE_LEVEL=ops): a framework operator is about to
  // run with `tensors`; the written ones are measured now (`pre`), CUDA ones
  // on `stream` (the current stream). Returns a token for OnOpAfter, or -1
  // when the op is not captured (outside the selected steps, kernel level).
  virtual int64_t OnOpBefore(std::span<const OpTensor> tensors, uint64_t stream) {
    (void)tensors, (void)stream;
    return -1;
  }
  // The op `name` ran: every tensor (arguments and results) is measured and
  // the record written. `token` from OnOpBefore on this thread.
  virtual void OnOpAfter(int64_t token, std::string_view name, std::span<const OpTensor> tensors,
                         uint64_t stream) {
    (void)token, (void)name, (void)tensors, (void)stream;
  }
  // The CUDA device for operator-level CUDA tensors, once CUDA is up (not owned).
  virtual void SetOpDevice(Device* device) { (void)device; }

  // Completes outstanding measurements, writes them and flushes (process exit).
  virtual void Shutdown() = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_EVENT_SINK_H_
