// File: launcher/job_environment.h
//
// What `twice` and `doctor` can tell about a job's run-to-run determinism
// before it runs, and what a finished run recorded: the env.* values the
// shim will record (common/format/environment.h) from the environment the
// job inherits, its world size, and a run's trace environment read back.
// The judgement itself is common/format's RunToRunRisks: one rule for the
// warnings of twice, the rows of doctor and the trace's keys.
//
// Example:
//   EnvironmentValues v = RecordedVariables(ctx.env);
//   for (const RunToRunRisk& r : RunToRunRisks(v, true, JobWorldSize(ctx.env, cmd))) ...
#ifndef NUMTRACE_LAUNCHER_JOB_ENVIRONMENT_H_
#define NUMTRACE_LAUNCHER_JOB_ENVIRONMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/format/environment.h"
#include "launcher/environment.h"

namespace numtrace::launcher {

// env.<NAME> for every variable in `env` the shim records, by name.
EnvironmentValues RecordedVariables(const Environment& env);

// WORLD_SIZE (or SLURM_NTASKS, OMPI_COMM_WORLD_SIZE), else torchrun's
// --nproc-per-node N (--nproc_per_node) in `command`, else 1.
int64_t JobWorldSize(const Environment& env, const std::vector<std::string>& command);

// The merged environment of the first trace (by name) in `dir`; empty when
// there is none or it cannot be read.
EnvironmentValues TraceEnvironmentIn(const std::string& dir);

// The risk most likely behind a divergence whose first origin (or first
// divergence) is the kernel `name`: the first risk whose setting can change
// that kernel; nullptr when none can.
const RunToRunRisk* LikelyCause(const std::vector<RunToRunRisk>& risks, const std::string& name);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_JOB_ENVIRONMENT_H_
