// File: common/format/records.h
//
// The records of trace format v1 (docs/format.md, section 1), as plain
// structs. The shim fills them and hands them to the JSONL writer; tests and
// tools build them directly. The analyzer reads traces into its own compact model (analyzer/model/), not
// into these, because a 1M-kernel trace must fit in little memory.
#ifndef NUMTRACE_COMMON_FORMAT_RECORDS_H_
#define NUMTRACE_COMMON_FORMAT_RECORDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/format/capture_counter_list.h"
#include "common/format/dtype.h"
#include "common/format/enum_list.h"
#include "common/format/environment.h"
#include "common/format/provenance.h"
#include "common/format/stats.h"

namespace numtrace {

inline constexpr std::string_view kTraceFormatName = "numtrace-trace";

// A rank's trace file in its output directory: "rank_<R>.ntrace.jsonl"
// (docs/format.md, section 1; a second writer of the rank adds ".pid<P>",
// shim/writer/trace_file.h).
std::string TraceFileName(int64_t rank, int64_t pid = -1);
inline constexpr int kTraceFormatVersion = 1;

// `role` of a buffer: did the launch change its contents? ONE list.
#define NUMTRACE_ROLES(X)                                      \
  X(kOut, "out")         /* contents changed */                \
  X(kIn, "in")           /* contents unchanged */              \
  X(kUnknown, "unknown") /* not measured before the launch */
enum class Role : uint8_t { NUMTRACE_ROLES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kRoleNames[] = {NUMTRACE_ROLES(NUMTRACE_ENUM_NAME)};
std::string_view RoleName(Role r);
[[nodiscard]] bool ParseRole(std::string_view s, Role* out);

struct RunInfo {
  std::string label;
  std::vector<std::string> argv;
  int64_t pid = 0;
  int64_t rank = 0;
  int64_t world_size = 1;
  std::string host;
  std::string start_time;  // RFC 3339, UTC
};

struct DeviceInfo {
  int64_t index = 0;
  std::string name;    // "NVIDIA H200"
  std::string cc;      // "9.0"
  std::string driver;  // "580.159"
  std::string cuda;    // "13.0"
};

// What one record stands for (header `capture.level`; docs/format.md). ONE
// list: the header's words, the NUMTRACE_LEVEL setting's words.
#define NUMTRACE_CAPTURE_LEVELS(X)                                              \
  X(kKernels, "kernels") /* CUPTI: one record per kernel launch (the default) */ \
  X(kOps, "ops")         /* one record per framework operator call            */

enum class CaptureLevel : uint8_t { NUMTRACE_CAPTURE_LEVELS(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kCaptureLevelNames[] = {NUMTRACE_CAPTURE_LEVELS(NUMTRACE_ENUM_NAME)};
inline std::string_view CaptureLevelName(CaptureLevel l) { return kCaptureLevelNames[static_cast<int>(l)]; }
// A `kernel` record's `level` at operator level (absent: a kernel launch).
inline constexpr std::string_view kOpRecordLevel = "op";

struct CaptureInfo {
  std::vector<int64_t> steps;
  std::string outputs;   // "changed" or "all"
  std::string selector;  // free text describing the filters (for people; never parsed)
  // The settings a re-capture must repeat for its seq numbers to match
  // (common/settings/settings.h, `recapture`), NUMTRACE_* variable -> value as
  // set, in table order; a setting left at its default is absent.
  std::vector<std::pair<std::string, std::string>> settings;
  std::string watch;     // "full" or "sampled" when digests are taken on every step, else empty
  // `level`; absent in traces from before it existed, which are kernel level.
  std::optional<CaptureLevel> level;
};

struct TraceHeader {
  std::string producer;  // "libnumtrace 0.1.0"
  std::optional<RunInfo> run;
  std::optional<DeviceInfo> device;  // absent for a simulated device
  std::optional<CaptureInfo> capture;
  // What else decides the numbers (common/format/environment.h), in the
  // order learned; written as the object "environment" when not empty.
  EnvironmentValues environment;
};

struct BufferRecord {
  uint32_t arg = 0;     // kernel parameter the pointer was found in
  uint64_t addr = 0;    // buffer start (written as a hex string)
  uint64_t offset = 0;  // pointer offset into the buffer
  uint64_t bytes = 0;   // buffer size
  DType dtype = DType::kRaw;
  DTypeSource dtype_from = DTypeSource::kDefault;
  Role role = Role::kUnknown;
  BufferStats stats;                // after the launch
  std::optional<BufferStats> pre;   // before the launch, when measured
  // Operator-level records only (KernelRecord::op_level): the tensor's
  // shape and device ("cpu", "cuda:0"); `bytes` is then the tensor's own
  // size and `offset` its byte offset into the storage at `addr`.
  std::optional<std::vector<int64_t>> shape;
  std::string device;  // written only when non-empty
};

struct KernelRecord {
  uint64_t seq = 0;                     // dense, 0-based, launch order in this file
  std::optional<uint64_t> launch;       // process-wide launch count
  std::optional<int64_t> step;          // training step
  std::string name;                     // symbol as the driver reports it
  std::string demangled;                // written only when it differs from name
  std::optional<uint64_t> stream;
  std::optional<std::array<uint32_t, 3>> grid, block;
  std::optional<uint64_t> graph;        // CUDA graph the kernel ran in
  // Provenance (common/format/provenance.h), each absent when unknown.
  std::optional<std::string> scope;     // module path; "" is the root module
  std::string op;                       // "aten::mm"; written only when non-empty
  Phase phase = Phase::kNone;           // written only when not kNone
  std::string src;                      // "file.py:12"; written only when non-empty
  // One framework operator call, not a kernel launch (written as `level`
  // kOpRecordLevel): `name` is the operator, no grid/block.
  bool op_level = false;
  std::vector<BufferRecord> buffers;
};

// The machine-readable kinds of notes (docs/format.md, "note").
inline constexpr std::string_view kNoteUnmeasured = "unmeasured";
inline constexpr std::string_view kNoteTensorMap = "tensor_map";

// Whether a framework allocator's tensor map was attached (a note of kind
// tensor_map, its `name`). ONE list: the shim's state, the note's word.
#define NUMTRACE_TENSOR_MAP_STATES(X)                                                  \
  X(kNotAttached, "not_attached") /* buffers in its segments are whole segments */ \
  X(kAttached, "attached")                                                           \
  X(kNotNeeded, "not_needed") /* another backend: one allocation per tensor */

enum class TensorMapState : uint8_t { NUMTRACE_TENSOR_MAP_STATES(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kTensorMapStateNames[] = {NUMTRACE_TENSOR_MAP_STATES(NUMTRACE_ENUM_NAME)};
inline std::string_view TensorMapStateName(TensorMapState s) { return kTensorMapStateNames[static_cast<int>(s)]; }

struct NoteRecord {
  std::optional<uint64_t> launch;
  std::string level = "warn";  // "info", "warn", "error"
  std::string msg;
  // Machine-readable form of some notes (docs/format.md, "note"); empty for a
  // free-text note. kind "unmeasured": kernel `name` ran `count` times during
  // a captured step without being measured; kind "tensor_map": `name` is a
  // TensorMapState word.
  std::string kind;
  std::string name;
  std::optional<uint64_t> count;
};

// Watch mode (docs/format.md, `digest`): one per step, written at its end.
// kernel_hashes[i] and names[i] belong to the step's i-th launch; names are
// ids of `kernel_name` records (KernelNameRecord) written before first use.
struct DigestRecord {
  int64_t step = 0;
  uint64_t kernels = 0;
  uint64_t hash = 0;                   // StepHash(kernel_hashes), common/format/digest.h
  std::optional<uint64_t> nonfinite;   // index of the first launch that left a NaN/Inf
  uint64_t lost = 0;                   // launches whose digest the device could not take
  std::vector<uint64_t> kernel_hashes;
  std::vector<uint64_t> names;
};

// What a layer learned after the header was written (docs/format.md,
// `environment`): readers merge `values` into the header's environment.
struct EnvironmentRecord {
  EnvironmentValues values;
};

struct KernelNameRecord {
  uint64_t id = 0;
  std::string name;
};

struct FooterRecord {
  uint64_t kernels = 0;
  uint64_t launches = 0;
  uint64_t dropped = 0;
  uint64_t unmeasured = 0;  // kernels that ran in captured steps but were not measured
  // The capture layer's own counters (launches seen, launches without a
  // layout, ...), written in this order as the object "counters". Name and
  // count, not CaptureCounter: a reader keeps the names of another version.
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::string status = "complete";
  std::string end_time;

  // The count of `c` in `counters`; nullopt when this footer has no such
  // counter (a writer older than the counter).
  std::optional<uint64_t> CounterValue(CaptureCounter c) const;
};

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_RECORDS_H_
