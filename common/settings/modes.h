// File: common/settings/modes.h
//
// The word lists of the capture settings that choose one mode among a few:
// NUMTRACE_STEP_MODE, NUMTRACE_OUTPUTS, NUMTRACE_WATCH and
// NUMTRACE_ALLOCATOR. Each is ONE X-list (common/format/enum_list.h): the
// enumerator and the word the setting, the `numtrace run` option and the
// trace header spell, so the parser (settings.cc), the header's capture
// fields and doctor's rows read the same words. The settings table says
// which words each setting accepts; this header only names them.
//
// Example:
//   StepModeName(StepMode::kNvtx);                                  // "nvtx"
//   EnumFromName<WatchMode>(kWatchModeNames, "sampled");            // WatchMode::kSampled
//   ParseAllocatorMode(" async ");                                  // AllocatorMode::kAsync
#ifndef NUMTRACE_COMMON_SETTINGS_MODES_H_
#define NUMTRACE_COMMON_SETTINGS_MODES_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/format/enum_list.h"
#include "common/text/trim.h"

namespace numtrace::settings {

// How launches are grouped into numbered steps (NUMTRACE_STEP_MODE): the
// setting's words (the last three take ":ARGUMENT") and the capture's
// selector text.
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

// NUMTRACE_OUTPUTS and the header's capture.outputs.
#define NUMTRACE_OUTPUTS_MODES(X)                                   \
  X(kChanged, "changed") /* measure before and after; roles out/in */ \
  X(kAll, "all")         /* measure after only; roles unknown */
enum class OutputsMode : uint8_t { NUMTRACE_OUTPUTS_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kOutputsModeNames[] = {NUMTRACE_OUTPUTS_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view OutputsModeName(OutputsMode m) { return kOutputsModeNames[static_cast<int>(m)]; }

// Watch mode (NUMTRACE_WATCH, shim/engine/watch.h): a digest of every launch
// on every step. The setting's words and the header's capture.watch.
#define NUMTRACE_WATCH_MODES(X)                                          \
  X(kOff, "off")                                                         \
  X(kFull, "full")       /* every byte of every buffer hashed          */ \
  X(kSampled, "sampled") /* the documented sample (common/format/digest.h) */

enum class WatchMode : uint8_t { NUMTRACE_WATCH_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kWatchModeNames[] = {NUMTRACE_WATCH_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view WatchModeName(WatchMode m) { return kWatchModeNames[static_cast<int>(m)]; }

// Where a PyTorch job's buffers get their extents (NUMTRACE_ALLOCATOR): the
// setting's words, `numtrace run --allocator` and doctor's row.
#define NUMTRACE_ALLOCATOR_MODES(X)                                                  \
  X(kCaching, "caching") /* PyTorch's own allocator, untouched; tensors from its
                            trace, fed by the hooks (tensor_map.h)                */ \
  X(kAsync, "async")     /* numtrace run sets PYTORCH_CUDA_ALLOC_CONF=
                            backend:cudaMallocAsync: one allocation per tensor    */

enum class AllocatorMode : uint8_t { NUMTRACE_ALLOCATOR_MODES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kAllocatorModeNames[] = {NUMTRACE_ALLOCATOR_MODES(NUMTRACE_ENUM_NAME)};
inline std::string_view AllocatorModeName(AllocatorMode m) { return kAllocatorModeNames[static_cast<int>(m)]; }
// The mode a NUMTRACE_ALLOCATOR value names (blanks around it ignored), if any.
inline std::optional<AllocatorMode> ParseAllocatorMode(std::string_view text) {
  return EnumFromName<AllocatorMode>(kAllocatorModeNames, Trim(text));
}

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_MODES_H_
