// File: shim/engine/events.h
//
// What the CUDA-facing layer (shim/cupti/) tells the engine, in plain types:
// no CUDA or CUPTI header is needed to build or test the engine. Every field
// is copied out of the callback by the caller; pointers here are valid only
// for the duration of the engine call.
#ifndef NUMTRACE_SHIM_ENGINE_EVENTS_H_
#define NUMTRACE_SHIM_ENGINE_EVENTS_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/format/records.h"

namespace numtrace::shim {

// One kernel parameter's place in the packed parameter bytes
// (cuFuncGetParamInfo: offset and size, no type).
struct ParamSlot {
  uint32_t offset = 0;
  uint32_t size = 0;
};

struct LaunchEvent {
  std::string_view symbol;             // as the driver reports it (usually mangled)
  uint64_t function = 0;               // CUfunction/CUkernel handle, a cache key
  std::span<const uint8_t> params;     // parameter bytes packed at the layout's offsets
  std::span<const ParamSlot> layout;   // one entry per kernel parameter
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint64_t stream = 0;                 // resolved stream handle (legacy/per-thread mapped)
  uint64_t context = 0;
  int device = 0;
  bool stream_capturing = false;       // the stream is being captured into a graph
  // False when the caller skipped reading the parameters and the capture
  // state because the sink said Quiet(): params/layout are empty and
  // stream_capturing unknown. Such a launch is counted, never measured.
  bool decoded = true;
};

enum class AllocKind : uint8_t {
  kPlain,        // cuMemAlloc and friends
  kStreamOrdered,  // cuMemAllocAsync / from pool
  kVirtualMap,   // cuMemMap of a VMM range
  kTensorBlock,  // a framework allocator's block or segment (tensor_map.h)
};

struct AllocEvent {
  uint64_t address = 0;
  uint64_t bytes = 0;
  AllocKind kind = AllocKind::kPlain;
  int device = 0;
};

struct FreeEvent {
  uint64_t address = 0;
  uint64_t bytes = 0;  // known for cuMemUnmap; 0 when the free names the start only
  AllocKind kind = AllocKind::kPlain;
};

// What a framework allocator reports through numtrace_tensor_event (the
// PyTorch hooks, from the caching allocator's own trace). The numbers are
// the C API's `action` argument: keep them.
enum class TensorAction : uint8_t {
  kAlloc = 0,         // a block handed out: address, requested bytes
  kFree = 1,          // a block returned (its free completed)
  kSegmentAlloc = 2,  // a segment allocated or mapped: address, bytes
  kSegmentFree = 3,   // a segment freed or unmapped: address, bytes
};

// numtrace_tensor_map_status's `state` is a TensorMapState
// (common/format/records.h): its numbers are the C API's.
using ::numtrace::TensorMapState;

struct TensorEvent {
  TensorAction action = TensorAction::kAlloc;
  int device = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
};

// Operator level (NUMTRACE_LEVEL=ops): one tensor of a framework operator
// call, as the PyTorch hooks' dispatch mode hands it over
// (numtrace_op_before/after; the C API's numtrace_tensor).
enum class OpDevice : uint8_t { kCpu, kCuda, kOther };

struct OpTensor {
  uint64_t storage = 0;  // the storage's data pointer (record `addr`)
  uint64_t offset = 0;   // byte offset of the first element into the storage
  uint64_t data = 0;     // where the elements are read: storage + offset, or a contiguous copy
  std::span<const int64_t> shape;
  std::span<const int64_t> strides;  // in elements; empty: contiguous
  DType dtype = DType::kRaw;
  uint32_t element_size = 1;
  OpDevice device = OpDevice::kCpu;
  int device_index = 0;
  std::string_view device_name;  // "mps", "xla:0": what kOther is
  uint32_t arg = 0;        // schema position; results after the arguments
  bool written = false;    // the op may write it (a result, in-place, out=)
};

struct GraphLaunchEvent {
  uint64_t graph_exec = 0;
  uint64_t stream = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_EVENTS_H_
