// File: analyzer/read/debugmode_common.h
//
// What the two DebugMode readers share: torchtitan's text activation log
// (debugmode_reader.h) and PyTorch's DebugMode JSON log
// (debugmode_json_reader.h) hold the same kind of trace - operator records
// whose tensors are known by printed values only, no addresses, no
// environment, no launches - so the trace is set up, each record appended,
// and the trace finished here, once:
//
// - StartDebugModeTrace / FinishDebugModeTrace: the trace's fields that say
//   what such a log holds (FlowKey::kHashChain, records_* false), its label
//   and rank from the file name; at the end the unused reserve is given
//   back and the optimizer's update chains found (AssignUpdateChains).
// - DebugModeRecord: one record with its buffers, each buffer with what the
//   log printed for it (Trace::printed, parallel to buffers), and its
//   provenance. An output's addr is 1 + its record's index (OutputAddr):
//   the logs have no addresses, data_flow.h follows these and the hashes.
//
// Example:
//   Trace trace = StartDebugModeTrace(path, "torch DebugMode");
//   DebugModeRecord rec(&trace, RecordLevel::kOp, name, demangled);
//   rec.Add(LoggedBuffer(0, Role::kOut, DType::kF32, 6, rec.OutputAddr(), kPrintedStats), printed);
//   rec.Push({.scope = "layers.0", .op = "aten::mm", .phase = Phase::kForward});
//   FinishDebugModeTrace(&trace);
#ifndef NUMTRACE_ANALYZER_READ_DEBUGMODE_COMMON_H_
#define NUMTRACE_ANALYZER_READ_DEBUGMODE_COMMON_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// A trace of a DebugMode log at `path`, written by `producer` (header.producer).
Trace StartDebugModeTrace(std::string_view path, std::string_view producer);
// Reserves room for about `records` records and `buffers` buffers (with
// their printed values); a hint only.
void ReserveDebugModeTrace(Trace* trace, uint64_t records, uint64_t buffers);
// Gives back the unused reserve and assigns the update chains.
void FinishDebugModeTrace(Trace* trace);

// Where a record came from, as the log says it: scope already without the
// root module's class (WithoutRootClass); empty op / src: not said.
struct DebugModeOrigin {
  std::optional<std::string_view> scope;
  std::string_view op;
  Phase phase = Phase::kNone;
  std::string_view src;
};

// A buffer of a tensor the log shows: dtype kRaw and numel 0 when the log
// does not say (then no size either).
// (Inline, as Add below: once per buffer, in the readers' hot loops.)
inline Buffer LoggedBuffer(uint32_t arg, Role role, DType dtype, uint64_t numel, uint64_t addr, uint8_t fingerprint) {
  Buffer b;
  b.arg = arg;
  b.role = role;
  b.dtype = dtype;
  b.dtype_from = dtype == DType::kRaw ? DTypeSource::kDefault : DTypeSource::kSignature;
  b.stats.n = numel;
  b.bytes = numel * DTypeSize(dtype);
  b.addr = addr;
  b.fingerprint = fingerprint;
  return b;
}

// One record being appended: construct, Add its buffers, Push it.
class DebugModeRecord {
 public:
  DebugModeRecord(Trace* trace, RecordLevel level, StringId name, StringId demangled);
  // The addr of this record's outputs: 1 + its index in trace->kernels.
  uint64_t OutputAddr() const { return trace_->kernels.size() + 1; }
  void Add(const Buffer& buffer, const PrintedStats& printed) {
    trace_->buffers.push_back(buffer);
    trace_->printed.push_back(printed);
  }
  // Appends the record (seq = its index) with its provenance.
  void Push(const DebugModeOrigin& origin);

 private:
  Trace* trace_;
  Kernel kernel_;
};

// Fills Trace::update_chain from the hashes alone (the logs have no tensor
// identities for them): walking the ops in order, an op outside every module,
// in forward or the optimizer phase (not backward, not the phase-less ops
// of a JSON log's backward), joins the chain of the latest such op whose output
// hash equals one of its input hashes (first input first); an in-place op
// (name ending in '_') that joins none starts a chain; others are no chain's.
// A zero hash links nothing: every fresh optimizer state is zero. Leaves
// update_chain empty when no op is in a chain.
void AssignUpdateChains(Trace* trace);

// A module path from ModTracker without the root module's class name:
// "FSDPLlama3Model.layers.1" -> "layers.1", "Model" -> "", "layers.1" as is.
std::string_view WithoutRootClass(std::string_view fqn);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_DEBUGMODE_COMMON_H_
