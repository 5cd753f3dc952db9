#include "sim/sim_run.h"

#include <memory>

#include "shim/device/host_device.h"
#include "shim/engine/null_sink.h"
#include "shim/engine/runtime.h"

namespace numtrace::sim {

SimRun RunSimulation(const MlpOptions& options, const settings::GetEnvFn& getenv) {
  SimRun run;
  shim::Runtime runtime(getenv);
  run.configured = runtime.Configure();
  shim::EventSink* sink = nullptr;
  if (run.configured) {
    sink = runtime.Start(std::make_unique<shim::HostDevice>(), std::nullopt);
    // What the PyTorch hooks do for Triton kernels, whose names carry no dtype.
    runtime.Annotate(kTritonBiasReluName, kTritonBiasReluDTypes);
    // And for torch's settings (docs/format.md, environment): the atomics
    // bias gradient is what non-deterministic algorithms allow.
    runtime.AddEnvironment({{"torch.deterministic_algorithms", options.nondeterministic ? "false" : "true"}});
  }
  // Without a sink the loop still runs, untouched, as a job would.
  shim::NullSink null_sink;
  run.result = TrainMlp(options, sink ? sink : &null_sink);
  runtime.Shutdown();
  run.trace_path = runtime.trace_path();
  return run;
}

}  // namespace numtrace::sim
