// File: shim/engine/record_builder.h
//
// One entry of the engine's launch order (PendingRecord) and what is built
// from it once its turn comes. Engine::Pump polls the devices into the
// entries, collects dump copies and watch digests, then hands each complete
// entry, in launch order, to the builders here and writes what they build.
// Nothing here touches the engine's locks, counters or sink: an entry that
// reached its turn belongs to the writer's thread alone.
//
// The one rule kept here: a kernel's buffer whose hash and element count
// are the same before and after the launch is an input (`pre` omitted, it
// would repeat `stats`); any other is an output and `pre` keeps what it
// held; without a "before" (no ENTER, --outputs all) its role is unknown.
// An operator's buffers come with their roles from its schema (MeasureOp);
// its outputs only get their `pre` here.
//
// Example (Engine::Write):
//   if (p.dropped) { if (n <= kDropNotesMax) sink->Push(DropNote(p, n == kDropNotesMax)); }
//   else sink->Push(p.op ? BuildOpRecord(p) : BuildKernelRecord(p));
#ifndef NUMTRACE_SHIM_ENGINE_RECORD_BUILDER_H_
#define NUMTRACE_SHIM_ENGINE_RECORD_BUILDER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/format/records.h"
#include "shim/engine/kernel_cache.h"
#include "shim/engine/measurement_plan.h"
#include "shim/engine/provenance.h"
#include "shim/engine/step_tracker.h"
#include "shim/engine/tensor_dumper.h"

namespace numtrace::shim {

// A note, a captured kernel launch or (operator level) an operator call,
// from its capture until the writer's thread writes it. The engine fills it
// under its lock; once Complete() it is the writer's.
struct PendingRecord {
  bool is_note = false;
  NoteRecord note;
  const KernelInfo* kernel = nullptr;  // a kernel launch's; null for notes and op calls
  LaunchDecision decision;
  uint64_t stream = 0;
  std::array<uint32_t, 3> grid{}, block{};
  std::vector<PlannedBuffer> buffers;
  std::vector<BufferStats> before, after;  // before[i], after[i] measure buffers[i]
  bool want_before = false, has_before = false, has_after = false;
  bool dropped = false;
  const char* drop_reason = "";
  std::unique_ptr<LaunchDump> dump;  // NUMTRACE_DUMP selected this launch
  std::string dump_note;             // why it was not dumped, when it was selected
  provenance::Stamp provenance;      // the launching thread's scope/op/phase
  // Operator level: the record, its stats filled as measurements come in;
  // the indices of its buffers measured on the op device, in item order.
  std::unique_ptr<KernelRecord> op;
  std::vector<std::pair<uint32_t, BufferStats>> op_pre;  // (arg, stats before the call)
  std::vector<uint32_t> device_before;  // args measured before on the op device, in item order
  std::vector<uint32_t> device_after;   // indices into op->buffers measured after on it

  bool Complete() const {
    return is_note || dropped ||
           (has_after && (!want_before || has_before) && (!dump || dump->outstanding == 0));
  }
};

// The record of a complete kernel launch (not a note, not dropped, not an op
// call); `seq` is left to the writer. Takes the buffers' stats and the
// provenance out of `p`; its dump stays for the dump's notes.
KernelRecord BuildKernelRecord(PendingRecord& p);

// The record of a complete operator call (p.op set, not dropped), its
// outputs given the stats they held before the call; `seq` is left to the
// writer. Takes the record out of `p`.
KernelRecord BuildOpRecord(PendingRecord& p);

// The note saying that dropped entry `p` was not recorded; `last` adds that
// later drops are only counted (the engine writes kDropNotesMax of them).
NoteRecord DropNote(const PendingRecord& p, bool last);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_RECORD_BUILDER_H_
