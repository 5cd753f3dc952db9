// File: common/settings/config.h
//
// The shim's settings, read once from NUMTRACE_* environment variables.
// Which variables exist, their parsers, accepted forms and `numtrace run`
// options are ONE table (settings.h); docs/configuration.md's reference
// table is checked against it. Parsing takes a getenv-like function so tests
// (and `numtrace run`, which validates the job's environment before starting
// it) need not touch the real environment. A bad value yields ONE line
// naming the variable, the value and the accepted forms; the caller prints
// it and leaves the library inert.
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
#include <utility>
#include <vector>

#include "common/format/enum_list.h"
#include "common/format/records.h"
#include "common/settings/dump_selector.h"
#include "common/settings/name_pattern.h"

namespace numtrace::shim {

// How launches are grouped into numbered steps (NUMTRACE_STEP_MODE). ONE
// list: the setting's words (the last three take ":ARGUMENT") and the
// capture's selector text.
#define NUMTRACE_STEP_MODES(X)                                                     \
  X(kMark, "mark")         /* numtrace_mark_step() ends the current step */          \
  X(kApi, "api")           /* each numtrace_capture_begin()..end() range is one step */ \
  X(kProfiler, "profiler") /* each cudaProfilerStart()..Stop() range is one step */  \
  X(kNvtx, "nvtx")         /* nvtx:REGEX: each NVTX range whose name matches */      \
  X(kKernel, "kernel")     /* kernel:REGEX: each launch of a matching kernel starts one */ \
  X(kLaunches, "launches") /* launches:N: every N launches form one step */
enum class StepMode : uint8_t { NUMTRACE_STEP_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kStepModeNames[] = {NUMTRACE_STEP_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view StepModeName(StepMode m) { return kStepModeNames[static_cast<int>(m)]; }

// A set of step numbers: "2", "2,5", "3-4", "1,3-4", "all".
class StepSet {
 public:
  static StepSet All() { StepSet s; s.all_ = true; return s; }
  static StepSet Only(int64_t step) { StepSet s; s.ranges_.emplace_back(step, step); return s; }
  [[nodiscard]] static std::optional<StepSet> Parse(std::string_view text);
  bool all() const { return all_; }
  bool Contains(int64_t step) const;
  // The largest listed step (INT64_MAX for "all"): nothing after it is captured.
  int64_t Last() const;
  // Explicit step numbers for the trace header (empty for "all"; ranges expanded up to 4096 entries).
  std::vector<int64_t> Listed() const;
  std::string ToString() const;

 private:
  bool all_ = false;
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // inclusive, sorted
};

// A kernel-name filter in compute-sanitizer's style: a substring, or
// "regex:EXPR" (ECMAScript, searched anywhere in the name; name_pattern.h).
struct NameFilter {
  std::string text;  // as given
  bool is_regex = false;
  NamePattern regex;
  bool Matches(std::string_view name) const;
};

// NUMTRACE_OUTPUTS and the header's capture.outputs. ONE list.
#define NUMTRACE_OUTPUTS_MODES(X)                                   \
  X(kChanged, "changed") /* measure before and after; roles out/in */ \
  X(kAll, "all")         /* measure after only; roles unknown */
enum class OutputsMode : uint8_t { NUMTRACE_OUTPUTS_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kOutputsModeNames[] = {NUMTRACE_OUTPUTS_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view OutputsModeName(OutputsMode m) { return kOutputsModeNames[static_cast<int>(m)]; }

// Watch mode (NUMTRACE_WATCH, watch.h): a digest of every launch on every
// step. ONE list: the setting's words and the header's capture.watch.
#define NUMTRACE_WATCH_MODES(X)                                          \
  X(kOff, "off")                                                         \
  X(kFull, "full")       /* every byte of every buffer hashed          */ \
  X(kSampled, "sampled") /* the documented sample (common/format/digest.h) */

enum class WatchMode : uint8_t { NUMTRACE_WATCH_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kWatchModeNames[] = {NUMTRACE_WATCH_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view WatchModeName(WatchMode m) { return kWatchModeNames[static_cast<int>(m)]; }

// Where a PyTorch job's buffers get their extents (NUMTRACE_ALLOCATOR). ONE
// list: the setting's words, `numtrace run --allocator` and doctor's row.
#define NUMTRACE_ALLOCATOR_MODES(X)                                                  \
  X(kCaching, "caching") /* PyTorch's own allocator, untouched; tensors from its
                            trace, fed by the hooks (tensor_map.h)                */ \
  X(kAsync, "async")     /* numtrace run sets PYTORCH_CUDA_ALLOC_CONF=
                            backend:cudaMallocAsync: one allocation per tensor    */

enum class AllocatorMode : uint8_t { NUMTRACE_ALLOCATOR_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kAllocatorModeNames[] = {NUMTRACE_ALLOCATOR_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view AllocatorModeName(AllocatorMode m) { return kAllocatorModeNames[static_cast<int>(m)]; }
// The mode a NUMTRACE_ALLOCATOR value names (blanks around it ignored), if any.
std::optional<AllocatorMode> ParseAllocatorMode(std::string_view text);

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

using GetEnvFn = std::function<const char*(const char*)>;

// PyTorch's own allocator setting as the job gives it: PYTORCH_ALLOC_CONF
// (its primary name in current torch) when set and not empty, else
// PYTORCH_CUDA_ALLOC_CONF (the older name, lower priority). Empty `name`
// when neither is set.
struct TorchAllocConf {
  std::string name;   // the variable that holds it
  std::string value;
  bool cuda_malloc_async() const { return value.find("cudaMallocAsync") != std::string::npos; }
};
TorchAllocConf FindTorchAllocConf(const GetEnvFn& getenv);

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

// The one boolean parser of every NUMTRACE_* switch (ENABLE, STRICT, any
// later one): the words of kBoolWords, any case, surrounding blanks ignored;
// empty is false. nullopt for anything else.
[[nodiscard]] std::optional<bool> ParseBool(std::string_view text);
inline constexpr std::string_view kBoolWords = "1, true, yes, on (or 0, false, no, off; any case)";

// Parses "64MiB", "1G", "4096", "512k" (binary multiples). Exposed for tests.
[[nodiscard]] std::optional<uint64_t> ParseByteSize(std::string_view text);

// The value parsers the settings table (settings.cc) is made of.
// A decimal count, blanks around ignored.
[[nodiscard]] std::optional<uint64_t> ParseCount(std::string_view text);
// "SUBSTRING" or "regex:EXPR", several separated by ';'; nullopt when none or a bad regex.
[[nodiscard]] std::optional<std::vector<NameFilter>> ParseNameFilters(std::string_view text);
// A NamePattern (ECMAScript, linear time; name_pattern.h); nullopt when it
// does not compile or is refused there.
[[nodiscard]] std::optional<NamePattern> CompileRegex(std::string_view text);
// Blanks (space, tab) removed from both ends.
std::string_view TrimBlanks(std::string_view text);

}  // namespace numtrace::shim

#endif  // NUMTRACE_COMMON_SETTINGS_CONFIG_H_
