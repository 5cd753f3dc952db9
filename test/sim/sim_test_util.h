// File: test/sim/sim_test_util.h
//
// Helpers for the simulation tests: a private environment per run (so runs
// in one test process do not share NUMTRACE_* settings), fresh temporary
// output directories, and reading a run's trace back with the analyzer.
#ifndef NUMTRACE_TEST_SIM_SIM_TEST_UTIL_H_
#define NUMTRACE_TEST_SIM_SIM_TEST_UTIL_H_

#include <map>
#include <string>

#include "analyzer/model/trace.h"
#include "sim/sim_run.h"

namespace numtrace::sim {

using Env = std::map<std::string, std::string>;

// A new empty directory under the test's temporary folder.
std::string FreshDir(const std::string& name);

// Runs the MLP with exactly `env` as the environment (plus
// NUMTRACE_OUTPUT_DIR=out_dir).
SimRun RunWithEnv(const MlpOptions& o, Env env, const std::string& out_dir);

// Reads the trace a run left; fails the test if there is none.
analyzer::Trace ReadRun(const SimRun& run);

}  // namespace numtrace::sim

#endif  // NUMTRACE_TEST_SIM_SIM_TEST_UTIL_H_
