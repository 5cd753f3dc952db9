// File: shim/engine/provenance.h
//
// Where in the model a launch comes from: the module scope, the operator and
// the phase current on the launching thread, as the PyTorch hooks (through
// the C API, numtrace_scope_push & co.) or the simulated loop announce them.
// The engine copies the thread's current state into each captured launch's
// record (trace format 1.2: scope, op, phase).
//
// Per thread on purpose: CUPTI launch callbacks run on the launching thread
// and PyTorch's backward runs on autograd threads, each with its own state.
// Pushes and pops reuse the thread's strings, so a warm thread allocates
// nothing. Bad input is absorbed and counted (footer counters
// provenance_capped, provenance_unmatched_pops): a pop without a push is
// ignored, a name longer than kProvenanceMaxBytes is cut, a stack deeper than
// kMaxDepth keeps counting depth without storing names.
//
// Example:
//   provenance::PushScope("layers.0.attention.wq");
//   provenance::PushOp("aten::mm");
//   provenance::SetPhase(Phase::kForward);
//   KernelRecord r; provenance::Current().ApplyTo(&r);  // scope, op, phase set
//   provenance::PopOp(); provenance::PopScope();
#ifndef NUMTRACE_SHIM_ENGINE_PROVENANCE_H_
#define NUMTRACE_SHIM_ENGINE_PROVENANCE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/format/provenance.h"
#include "common/format/records.h"

namespace numtrace::shim::provenance {

// Deeper nesting is counted, not stored (no real module tree comes close).
inline constexpr size_t kMaxDepth = 256;

// A copy of one thread's state, taken for a captured launch.
struct Stamp {
  std::optional<std::string> scope;  // innermost pushed scope; absent when none
  std::string op;                    // innermost pushed op; empty when none
  Phase phase = Phase::kNone;
  std::string src;                   // "train.py:42"; empty when none
  void ApplyTo(KernelRecord* r) &&;
};

void PushScope(std::string_view fqn);
// False when the thread had no scope pushed (counted, nothing changes).
bool PopScope();
void PushOp(std::string_view op);
bool PopOp();
void SetPhase(Phase phase);
// False (state unchanged) unless `word` is one of the four phase words or ""
// (which clears the phase).
[[nodiscard]] bool SetPhase(std::string_view word);
// The innermost user-code frame ("file:line") of what launches next; "" clears.
void SetSrc(std::string_view src);

// The calling thread's state now.
Stamp Current();
// True when the calling thread has anything to stamp (cheap: no copy).
bool Any();
// Tests: forget the calling thread's state.
void ResetThread();

// Compiler-generated kernels (numtrace_annotate_kernel_ops): the operators a
// kernel was generated from ("aten::addmm+aten::relu", from Inductor's
// kernel name), keyed by the kernel's symbol. Process-wide: a kernel compiled
// on one thread launches on another. A launch of such a kernel takes this op
// instead of its thread's (inside a compiled region the thread's op is the
// compiled graph's caller, not the kernel's source).
void SetKernelOps(std::string_view symbol, std::string_view ops);
// The calling thread's state for a launch of `symbol`.
Stamp ForLaunch(std::string_view symbol);

}  // namespace numtrace::shim::provenance

#endif  // NUMTRACE_SHIM_ENGINE_PROVENANCE_H_
