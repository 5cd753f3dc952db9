#include "shim/engine/record_builder.h"

namespace numtrace::shim {

KernelRecord BuildKernelRecord(PendingRecord& p) {
  KernelRecord r;
  r.launch = p.decision.launch;
  if (p.decision.step >= 0) r.step = p.decision.step;
  r.name = p.kernel->symbol;
  if (p.kernel->demangled != p.kernel->symbol) r.demangled = p.kernel->demangled;
  r.stream = p.stream;
  r.grid = p.grid;
  r.block = p.block;
  std::move(p.provenance).ApplyTo(&r);
  r.buffers.reserve(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const PlannedBuffer& b = p.buffers[i];
    BufferRecord br;
    br.arg = b.arg;
    br.addr = b.addr;
    br.offset = b.offset;
    br.bytes = b.bytes;
    br.dtype = b.dtype;
    br.dtype_from = b.dtype_from;
    if (i < p.after.size()) br.stats = p.after[i];
    if (p.has_before && i < p.before.size()) {
      const BufferStats& pre = p.before[i];
      const bool same = pre.hash == br.stats.hash && pre.n == br.stats.n;
      br.role = same ? Role::kIn : Role::kOut;
      if (!same) br.pre = pre;  // for inputs it would only repeat `stats`
    } else {
      br.role = Role::kUnknown;
    }
    r.buffers.push_back(std::move(br));
  }
  return r;
}

KernelRecord BuildOpRecord(PendingRecord& p) {
  KernelRecord r = std::move(*p.op);
  // An argument the operator's schema says it writes is an output even
  // when its bytes did not change: unlike a kernel's buffers, its bytes
  // before the call are often uninitialised memory (fill_ or zero_ of a
  // fresh empty), so "unchanged" would follow that memory's leftovers and
  // the same job twice would record other roles (seen: zero_ over memory
  // that happened to be zeros). Its `pre` says what it held.
  for (BufferRecord& b : r.buffers) {
    if (b.role != Role::kOut) continue;
    for (const auto& [arg, pre] : p.op_pre) {
      if (arg == b.arg) b.pre = pre;
    }
  }
  return r;
}

NoteRecord DropNote(const PendingRecord& p, bool last) {
  NoteRecord note;
  note.launch = p.decision.launch;
  // An operator call dropped before its name came (its "before" refused) is
  // written before OnOpAfter could name it.
  if (p.kernel != nullptr) {
    note.msg = "kernel " + p.kernel->symbol;
  } else if (p.op != nullptr && !p.op->name.empty()) {
    note.msg = "operator " + p.op->name;
  } else {
    note.msg = "an operator call";
  }
  note.msg += std::string(" not recorded: ") + p.drop_reason;
  if (last) note.msg += " (further drops are only counted in the footer)";
  return note;
}

}  // namespace numtrace::shim
