// File: shim/engine/runtime.h
//
// The process-wide state of libnumtrace.so, shared by the CUPTI layer
// (shim/cupti/, shim/api/injection.cc) and the public C API (shim/api/).
// It reads the configuration once, starts the engine and the trace writer
// when CUDA is up, and shuts them down at exit. Until Start, and forever
// when the configuration is bad or NUMTRACE_ENABLE=0, sink() is nullptr and
// the library does nothing: the program runs untouched.
//
// Fork: a child forgets the parent's engine and writer (they are leaked, not
// destroyed: their threads do not exist in the child); if the child starts
// CUDA itself, Start makes a new engine writing under its own file name.
//
// Example (the CUPTI layer):
//   Runtime& rt = Runtime::Get();
//   if (!rt.Configure()) return 0;            // message already printed
//   EventSink* sink = rt.Start(std::make_unique<CudaDevice>(...), info);
//   sink->OnLaunch(event);                    // from the callbacks
//   rt.Shutdown();                            // at exit (also registered with atexit)
#ifndef NUMTRACE_SHIM_ENGINE_RUNTIME_H_
#define NUMTRACE_SHIM_ENGINE_RUNTIME_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/format/records.h"
#include "common/settings/config.h"
#include "shim/engine/device.h"
#include "shim/engine/event_sink.h"

namespace numtrace::shim {

class Engine;
class RangeOracle;
class TraceWriter;

class Runtime {
 public:
  static Runtime& Get();
  // For tests: a runtime reading its settings through `getenv`.
  explicit Runtime(settings::GetEnvFn getenv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Reads NUMTRACE_* once; later calls return the first answer. False: stay
  // inert (a bad value was reported on stderr in one line; with
  // NUMTRACE_STRICT=1 the process exits with status 2 instead).
  bool Configure();
  const settings::Config& config() const { return config_; }

  // Starts the engine on `device` (owned from now on). Called once CUDA is
  // up. Returns the sink to feed, or nullptr when inert. A second call
  // returns the running sink and drops `device`.
  EventSink* Start(std::unique_ptr<Device> device, std::optional<DeviceInfo> info);
  // Operator level (NUMTRACE_LEVEL=ops): starts the engine on `host` (the
  // host reference: kernel launches are not captured at this level) without
  // waiting for CUDA, so a job that never starts CUDA is captured too. When
  // CUDA starts later, Start hands its device to the engine for CUDA
  // tensors. Returns the sink, or nullptr at kernel level or when inert.
  EventSink* StartOps(std::unique_ptr<Device> host);
  // This process started CUDA: the driver called InitializeInjection (at
  // cuInit) or CUDA started the engine (Start with a device). Leaves an empty
  // file named by the pid in NUMTRACE_RUN_STATE (set by numtrace run), once
  // per process, so that the run can say truthfully that a job which wrote
  // no trace never started CUDA. No CUDA call; one open() at most.
  void NoteCudaStarted();
  bool cuda_started() const { return cuda_started_.load(std::memory_order_acquire); }
  // nullptr while inert, before Start and in a forked child until it starts.
  EventSink* sink() const { return sink_.load(std::memory_order_acquire); }

  // numtrace_mark_step: forwarded to the engine once it runs. Marks made
  // before CUDA started it (a job may mark steps before its first kernel)
  // are counted and replayed at Start, so step numbers still match the
  // job's. True when the engine took the mark now. `next` >= 0:
  // numtrace_mark_step_to (EventSink::OnStepMarkTo).
  bool MarkStep(int64_t next = -1);

  // numtrace_annotate_kernel: kept until Start if it comes early. False (and
  // `*error` set) on a bad dtype list.
  bool Annotate(std::string_view kernel_name, std::string_view dtypes, std::string* error = nullptr);

  // numtrace_step_captured: 1 selected (mark mode), 0 not or inactive, 2
  // cannot tell (another step mode). From the configuration alone: works
  // before Start.
  int StepCaptured(int64_t step);

  // Drains, writes the footer. Idempotent. The engine stays allocated so
  // late callbacks from other threads stay harmless.
  void Shutdown();
  // Shutdown has begun (process exit): the CUDA layer makes no more waits.
  bool shut_down() const { return shut_down_.load(std::memory_order_acquire); }
  // Called once by Shutdown, before the engine's, when an engine runs: the
  // CUDA layer flushes and reports what it still holds (set once, at start).
  void SetBeforeShutdown(void (*fn)()) { before_shutdown_ = fn; }
  // Where the engine asks about pointers its allocation map lacks (the
  // driver, range_oracle.h). Set before Start; not owned, must live on.
  void SetRangeOracle(RangeOracle* oracle) { range_oracle_ = oracle; }
  // Called on every tick of the writer's thread (never inside a CUDA
  // callback), with `step_ended` true once after each captured (or, in
  // watch mode, every) step: the
  // CUDA layer enables its activity records (first tick) and flushes them.
  void SetWriterTick(void (*fn)(bool step_ended)) { writer_tick_ = fn; }

  // Environment values (common/format/environment.h) learned by a layer:
  // the CUDA layer's device and library versions before Start, the hooks'
  // framework settings (numtrace_set_environment) at any time. Before
  // Start they join the header's `environment`; after, a value that
  // differs from the one recorded goes into an `environment` record.
  void AddEnvironment(const EnvironmentValues& values);

  // Path of the trace file once one was written (tests, logs).
  std::string trace_path() const;

  // Fork hooks (registered once by Get()).
  void BeforeFork();
  void AfterForkParent();
  void AfterForkChild();

  // The environment variable that marks a configuration message as printed
  // in this process tree (its value: the message's hash).
  static constexpr const char* kReportedVar = "NUMTRACE_REPORTED";

 private:
  TraceHeader MakeHeader(std::optional<DeviceInfo> info) const;
  // Makes the writer (outside mu_: the fork handlers' lock order) and the
  // engine; takes `device` only when this call starts them, else leaves it
  // to the caller (another thread started first) and returns that engine.
  EventSink* StartEngine(std::unique_ptr<Device>& device, std::optional<DeviceInfo> info);
  // What the shim itself knows at start-up: env.* variables, job.*.
  EnvironmentValues StartEnvironment() const;
  void ReportOncePerProcessTree(const std::string& message);

  settings::GetEnvFn getenv_;
  std::mutex mu_;
  bool configured_ = false, config_ok_ = false;
  settings::Config config_;
  std::vector<std::pair<std::string, std::string>> early_annotations_;
  int64_t early_marks_ = 0;  // guarded by mu_
  int64_t early_next_ = -1;  // guarded by mu_: the last early mark's `next`
  // Guarded by mu_: values added before Start, then every value recorded
  // so far (header and records), so an unchanged value is not repeated.
  EnvironmentValues environment_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<Device> op_device_;  // operator level: CUDA's device when it came after StartOps
  std::atomic<bool> cuda_started_{false};
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<Engine> engine_;
  std::atomic<EventSink*> sink_{nullptr};
  std::atomic<bool> shut_down_{false};
  void (*before_shutdown_)() = nullptr;
  RangeOracle* range_oracle_ = nullptr;
  void (*writer_tick_)(bool step_ended) = nullptr;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_RUNTIME_H_
