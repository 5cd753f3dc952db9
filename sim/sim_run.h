// File: sim/sim_run.h
//
// One simulated run end to end: the capture runtime configured from
// NUMTRACE_* settings (through `getenv`, so tests can pass their own), the
// host reference Device in place of the GPU, the MLP training loop, and the
// trace file it leaves. The same path libnumtrace.so takes in a real job,
// minus CUPTI.
//
// Example:
//   SimRun run = RunSimulation(options, [](const char* n) { return std::getenv(n); });
//   run.trace_path;   // ".../numtrace/rank_0.ntrace.jsonl" (empty if nothing captured)
#ifndef NUMTRACE_SIM_SIM_RUN_H_
#define NUMTRACE_SIM_SIM_RUN_H_

#include <string>

#include "common/settings/config.h"
#include "sim/mlp_trainer.h"

namespace numtrace::sim {

struct SimRun {
  bool configured = false;  // false: bad NUMTRACE_* value, nothing captured
  MlpResult result;
  std::string trace_path;
};

SimRun RunSimulation(const MlpOptions& options, const settings::GetEnvFn& getenv);

}  // namespace numtrace::sim

#endif  // NUMTRACE_SIM_SIM_RUN_H_
