// File: common/settings/config.h
//
// The shim's settings as one value (Config), read once from the NUMTRACE_*
// environment variables by ParseConfig. Which variables exist, their
// parsers, accepted forms and `numtrace run` options are one table
// (settings.h); docs/configuration.md's reference table is checked against
// it. Parsing takes a getenv-like function so tests (and `numtrace run`,
// which validates the job's environment before starting it) need not touch
// the real environment. A bad value yields ONE line naming the variable, the
// value and the accepted forms; the caller prints it and leaves the library
// inert.
//
// Example:
//   std::string error;
//   auto cfg = ParseConfig([](const char* n) { return std::getenv(n); }, &error);
//   if (!cfg) fprintf(stderr, "%s\n", error.c_str());
//   cfg->steps.Contains(2);  // true with the default NUMTRACE_STEPS=2
#ifndef NUMTRACE_COMMON_SETTINGS_CONFIG_H_
#define NUMTRACE_COMMON_SETTINGS_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/format/records.h"
#include "common/settings/dump_selector.h"
#include "common/settings/modes.h"
#include "common/settings/name_filter.h"
#include "common/settings/name_pattern.h"
#include "common/settings/step_set.h"

namespace numtrace::settings {

// Default of NUMTRACE_RING_MAX: the most device memory one context's
// reduction ring may grow to (cuda_device.h).
inline constexpr uint64_t kDefaultRingMax = 2ull << 30;

struct Config {
  std::string output_dir = "./numtrace";          // NUMTRACE_OUTPUT_DIR
  StepMode step_mode = StepMode::kMark;           // NUMTRACE_STEP_MODE
  std::string step_regex_text;                    // kNvtx / kKernel
  NamePattern step_regex;
  uint64_t launches_per_step = 0;                 // kLaunches
  StepSet steps = StepSet::Only(2);               // NUMTRACE_STEPS (all in range modes)
  uint64_t launch_skip = 0;                       // NUMTRACE_LAUNCH_SKIP
  std::optional<uint64_t> launch_count;           // NUMTRACE_LAUNCH_COUNT
  std::vector<NameFilter> include;                // NUMTRACE_KERNEL (';'-separated, any matches)
  std::vector<NameFilter> exclude;                // NUMTRACE_KERNEL_EXCLUDE
  uint64_t min_bytes = 0;                         // NUMTRACE_MIN_BYTES
  OutputsMode outputs = OutputsMode::kChanged;    // NUMTRACE_OUTPUTS
  std::string log_level = "warn";                 // NUMTRACE_LOG_LEVEL
  std::string label;                              // NUMTRACE_LABEL
  std::string job_git;                            // NUMTRACE_JOB_GIT (environment job.git)
  std::string job_command;                        // NUMTRACE_JOB_COMMAND (environment job.command)
  std::string run_state_dir;                      // NUMTRACE_RUN_STATE (Runtime::NoteCudaStarted)
  uint64_t device_memory = 64ull << 20;           // NUMTRACE_DEVICE_MEMORY
  uint64_t ring_max = kDefaultRingMax;            // NUMTRACE_RING_MAX
  std::string cupti_lib;                          // NUMTRACE_CUPTI_LIB
  bool strict = false;                            // NUMTRACE_STRICT (ParseBool)
  // NUMTRACE_ACTIVITY (ParseBool): the CUPTI kernel activity check
  // (kernel_activity.h). Off: kernels that ran unmeasured are not counted.
  bool activity = true;
  uint64_t queue_records = 65536;                 // NUMTRACE_QUEUE_RECORDS
  // NUMTRACE_EXIT_WAIT: the most exit waits for the GPU (a stream that
  // never drains - an NCCL peer died - must not keep the job alive).
  uint64_t exit_wait_seconds = 10;
  bool enabled = true;                            // NUMTRACE_ENABLE (ParseBool): off = silent, inert
  // Tensor dumps (dump_selector.h, tensor_dumper.h; docs/format.md section 5).
  std::optional<DumpSelection> dump;              // NUMTRACE_DUMP
  std::optional<DumpExpectation> dump_expect;     // NUMTRACE_DUMP_EXPECT
  std::string dump_dir;                           // NUMTRACE_DUMP_DIR (empty: output_dir)
  uint64_t dump_max_bytes = 4ull << 30;           // NUMTRACE_DUMP_MAX_BYTES
  WatchMode watch = WatchMode::kOff;              // NUMTRACE_WATCH
  AllocatorMode allocator = AllocatorMode::kCaching;  // NUMTRACE_ALLOCATOR
  CaptureLevel level = CaptureLevel::kKernels;    // NUMTRACE_LEVEL (records.h)
  std::string hooks_log;                          // NUMTRACE_HOOKS_LOG (written by the Python hooks, not the shim)

  // Free text for the header's capture.selector.
  std::string SelectorText() const;
};

// A getenv: std::getenv in the shim, a map in tests, the job's
// environment-to-be in `numtrace run`.
using GetEnvFn = std::function<const char*(const char*)>;

struct Setting;

// The first bad value ParseConfig met, in parts, so that `numtrace run` can
// name the option the user typed instead of the variable.
struct SettingError {
  const Setting* setting = nullptr;
  std::string value;     // as found
  std::string accepted;  // the setting's accepted forms
  // "NUMTRACE_X='v' is not valid; accepted: ... (numtrace stays off for this process)"
  std::string Line() const;
  // "NAME 'v' is not valid; accepted: ...": NAME is an option as typed (--steps).
  std::string LineFor(std::string_view name) const;
};

// Reads every NUMTRACE_* setting (settings.h) through `getenv`. Returns
// nullopt and sets `*error` to one line (no trailing newline) on the first
// bad value, and `*detail` (when given) to its parts.
[[nodiscard]] std::optional<Config> ParseConfig(const GetEnvFn& getenv, std::string* error,
                                                SettingError* detail = nullptr);

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_CONFIG_H_
