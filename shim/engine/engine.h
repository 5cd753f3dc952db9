// File: shim/engine/engine.h
//
// The capture engine: fed by the CUDA-facing layer through EventSink, it
// decides per launch whether to capture (step_tracker.h, kernel filters,
// launch window), finds the buffers the launch points into (buffer_scan.h),
// asks the Device to measure them - "before" at launch ENTER and "after" at
// EXIT, both on the launch's stream, never a host synchronisation - and,
// when the Device reports results (Pump, from the writer's thread), hands
// complete kernel records to the RecordSink in launch order.
//
// Launch path cost: a launch outside the selected steps is one atomic
// fetch_add, a few relaxed loads and a thread-local write: no lock, no
// allocation, no syscall. A captured launch takes one short mutex to take
// its place in the launch order.
//
// Example (what the CPU tests and the simulated training loop do):
//   HostDevice device;
//   TraceWriter writer(options);
//   Engine engine(config, &device, &writer);
//   writer.SetPump([&] { engine.Pump(); });
//   engine.OnAlloc({addr, bytes});
//   engine.OnLaunchEnter(launch); engine.OnLaunch(launch);
//   engine.OnStepMark();
//   engine.Shutdown();  // drains, writes the footer
#ifndef NUMTRACE_SHIM_ENGINE_ENGINE_H_
#define NUMTRACE_SHIM_ENGINE_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/format/records.h"
#include "shim/engine/device.h"
#include "shim/engine/alloc_map.h"
#include "shim/engine/annotations.h"
#include "common/settings/config.h"
#include "shim/engine/event_sink.h"
#include "shim/engine/kernel_cache.h"
#include "shim/engine/measurement_plan.h"
#include "shim/engine/range_oracle.h"
#include "shim/engine/record_builder.h"
#include "shim/engine/step_tracker.h"
#include "shim/engine/tensor_map.h"
#include "shim/engine/tensor_dumper.h"
#include "shim/engine/watch.h"
#include "shim/writer/record_sink.h"

namespace numtrace::shim {

struct EngineCounters {
  uint64_t launches = 0;  // every kernel launch seen
  uint64_t captured = 0;  // launches given a kernel record
  uint64_t dropped = 0;   // captured launches whose measurement was lost
};

class Engine : public EventSink {
 public:
  // Nothing is owned; all three must outlive the engine.
  Engine(const settings::Config& config, Device* device, RecordSink* sink);
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void OnLaunchEnter(const LaunchEvent& launch) override;
  void OnLaunch(const LaunchEvent& launch) override;
  bool Quiet() const override;
  void OnAlloc(const AllocEvent& alloc) override;
  void OnFree(const FreeEvent& free) override;
  void OnTensorEvent(const TensorEvent& event) override;
  void OnTensorMapStatus(TensorMapState state, std::string_view detail) override;
  void ExpectTensorMap() override { tensor_map_expected_.store(true, std::memory_order_relaxed); }
  void OnGraphLaunch(const GraphLaunchEvent& graph) override;
  void OnPoolTrim() override;
  void OnStepMark() override;
  void OnStepMarkTo(int64_t next) override;
  void OnCaptureBegin() override;
  void OnCaptureEnd() override;
  void OnProfilerStart() override;
  void OnProfilerStop() override;
  void OnRangePush(std::string_view name) override;
  void OnRangePop() override;
  void OnUnmeasured(std::string_view name, uint64_t count, bool in_graph) override;
  void OnWarning(std::string_view msg) override;
  // Operator level (config.level == kOps; event_sink.h). CPU tensors are
  // measured at once by the host reduction on all cores; CUDA tensors are
  // queued on the op device (SetOpDevice) on the caller's stream, like a
  // kernel's buffers; tensors elsewhere are left out, said once. In watch
  // mode every call of every step is also digested (WatchOp).
  int64_t OnOpBefore(std::span<const OpTensor> tensors, uint64_t stream) override;
  void OnOpAfter(int64_t token, std::string_view name, std::span<const OpTensor> tensors,
                 uint64_t stream) override;
  void SetOpDevice(Device* device) override { op_device_.store(device, std::memory_order_release); }
  // Drains the device, writes every record still owed, then the footer.
  // Idempotent; launches after it are counted but not captured.
  void Shutdown() override;

  // Collects finished measurements and passes every record whose turn has
  // come to the sink. Call from one background thread (the writer's); safe
  // against concurrent launches.
  void Pump();

  // User dtype annotation (numtrace_annotate_kernel). False on a bad list.
  bool Annotate(std::string_view kernel_name, std::string_view dtypes, std::string* error = nullptr);

  // Turns on tensor dumps (config.dump must be set; tensor_dumper.h) with
  // files named for `rank`. Call before launches flow.
  void EnableDumps(int64_t rank);

  EngineCounters counters() const;
  // Candidate pointers the allocation map lacks are asked of `oracle`
  // (range_oracle.h); its cache is cleared at every captured step's end.
  // Set before launches flow; not owned.
  void SetRangeOracle(RangeOracle* oracle) { ranges_ = oracle; }
  // True once after each captured step's end, and in watch mode after every
  // step's end (the writer's thread asks, to let the CUDA layer flush and
  // settle what it gathered during the step).
  bool TakeStepEnded() { return step_ended_.exchange(false, std::memory_order_acq_rel); }
  const AllocMap& allocs() const { return allocs_; }

 private:
  // Decides and, for a capture, scans and queues the entry. Returns the
  // pending index, or -1 when the launch is not captured.
  int64_t Begin(const LaunchEvent& launch, LaunchDecision d, bool at_enter);
  void MeasureAfter(const LaunchEvent& launch, int64_t index);
  void AbandonStale();
  void PushNote(uint64_t launch, std::string msg);  // a warning
  void PushNote(NoteRecord note);
  void NoteUnreachedDumps(const TensorDumper& dumper);
  // `as`: the number the step's records carry (StepTracker::Mark::ended_as).
  void StepEnded(int64_t step, int64_t as);
  void StepEnded(int64_t step) { StepEnded(step, step); }
  // Operator level: measures `tensors` (those `written` only when `before`)
  // into the pending op record `index`; CUDA ones are queued on the op device.
  void MeasureOp(int64_t index, std::span<const OpTensor> tensors, uint64_t stream, bool before);
  // Watch mode at operator level: digests one call of step `step` (its
  // tensors as the op record lists them) into the StepWatch.
  void WatchOp(int64_t step, std::string_view name, std::span<const OpTensor> tensors, uint64_t stream);
  // A tensor the operator level cannot measure: one stderr line and note a process.
  void SayOpUnmeasured(const std::string& what);
  // OnOpBefore's token for a call only digested (watch mode, step not
  // selected): this bit and the step.
  static constexpr uint64_t kWatchOpToken = uint64_t{1} << 62;
  void MarkDropped(int64_t index);
  // Pump's steps: a device's result into its entry; the complete entries at
  // the front of the launch order, taken out; one of them built
  // (record_builder.h) and written to the sink with its notes.
  void TakeResult(uint64_t ticket, std::span<const BufferStats> stats, bool failed);
  std::vector<PendingRecord> TakeComplete();
  void Write(PendingRecord& p);
  // Watch mode: the digest of a launch that went through (EXIT).
  void Watch(const LaunchEvent& launch, int64_t step) {
    if (watch_ && !shut_down_.load(std::memory_order_acquire))
      watch_->OnLaunch(launch, kernels_.Get(launch.function, launch.symbol), step, allocs_, ranges_, &tensors_);
  }
  // Tensor dumps: hands finished copies to the dumper (writer thread, under
  // pump_mu_); `wait` waits for the device's copies first (exit).
  void CollectCopies(bool wait);
  void DumpCopyFailed(int64_t index, bool after);

  const settings::Config& config_;
  Device* device_;
  RecordSink* sink_;
  const uint64_t id_;  // tells this engine's thread-local state from another's
  AnnotationTable annotations_;
  KernelCache kernels_;
  StepTracker tracker_;
  AllocMap allocs_;
  TensorMap tensors_;  // a framework allocator's blocks (numtrace_tensor_event)
  RangeOracle* ranges_ = nullptr;

  std::mutex mu_;  // pending_ and base_
  std::deque<PendingRecord> pending_;
  uint64_t base_ = 0;  // index of pending_.front()
  std::mutex pump_mu_;  // one Pump at a time keeps emission in order
  std::unique_ptr<TensorDumper> dumper_;  // null unless NUMTRACE_DUMP
  uint64_t emitted_ = 0;   // Pump only: kernel records the sink took = the next record's seq
  std::unique_ptr<StepWatch> watch_;      // null unless NUMTRACE_WATCH

  // captured_: launches given a pending record, counted under mu_ in launch
  // order (a dump plan's expected seq).
  std::atomic<uint64_t> captured_{0}, dropped_{0}, unmeasured_{0};
  std::atomic<int64_t> capturing_note_step_{-2};
  std::atomic<int64_t> graph_note_step_{-2};  // watch mode: the last step noted for a graph launch
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> drained_{false};  // Shutdown drained the device: watch slots left are lost
  std::atomic<bool> step_ended_{false};
  std::atomic<bool> tensor_map_expected_{false};  // ExpectTensorMap()
  std::atomic<bool> tensor_map_said_{false};      // a status came, or its absence was noted
  std::atomic<Device*> op_device_{nullptr};       // CUDA tensors at operator level (not owned)
  std::atomic<bool> op_unmeasured_said_{false};   // a tensor the op level cannot measure was noted
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_ENGINE_H_
