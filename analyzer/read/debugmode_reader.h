// File: analyzer/read/debugmode_reader.h
//
// Reads torchtitan's numerics activation logs (`rank_<R>_activations.log`,
// written by agent_tooling/numerics_debugging/activation_tracer.py,
// DebugMode-based; every block form in docs/format.md 1.5) into the same
// model as our own traces, so numtrace-diff can compare them too. A log is a
// short preamble ("Total captured activations: N", "Excluded ops
// dispatched: ...", a "====" rule) and then one block per captured op, each
// followed by a blank line:
//
//   [layers.0.attention.wq/op_3_mm]
//     Shape: torch.Size([8, 2048, 4096]), Dtype: torch.bfloat16
//     L2 norm: 1.234568e+03
//     Min: -6.156250e+00
//     Max: 7.031250e+00
//     Mean: 1.250000e-03
//     Output hash: 1.021337e+06          (float64 L1 norm; "a, b" for tuples)
//     Input hashes: 5.5e+02, 7.0e+01
//     Input producers: ;layers.0.attention_norm/op_1_mul   (';'-separated)
//     Location: common/attention.py:534
//     Phase: backward                    (absent: forward)
//
// or, for in-place ops and small tensors, a hash-only block: no Shape and no
// statistics, an Output hash when the op returned a tensor, Input hashes.
// `Shape` and `Dtype` may also be on lines of their own, and the key may
// carry a root-class prefix (`FSDPLlama3Model.layers.0...`); both are
// accepted. Unknown keys are ignored; nan / inf values are accepted.
//
// Mapping (one Kernel per block, seq = 0-based block index, level kOp):
// - name = the bracketed key, demangled = the op name ("mm"); scope, op and
//   phase as provenance (DebugModeProvenanceOf).
// - one role-`out` Buffer per output hash (a full block at least one): dtype
//   from the torch dtype (`raw` when unknown), n = product of the shape,
//   bytes = n * dtype size, min / max / l2 from the log, sum = mean * n,
//   l1 = the "Output hash" (else an "L1 norm" line), and hash = the bit
//   pattern of that L1 double. A hash-only block's outputs have no size and
//   no dtype (n = 0, bytes = 0). Every buffer's fingerprint is
//   kPrintedStats: every value as printed, and which were printed, go to
//   Trace::printed (parallel to buffers), what the judge compares
//   (judge/value_compare.h), since equal L1 is not equal bytes.
// - Non-finite values: the log holds aggregates, not counts, so counts are
//   lower bounds. nan = 1 when any statistic is NaN; else inf = 1 when Max
//   is +inf and ninf = 1 when Min is -inf. has_range only when Min and Max
//   are both present and finite.
// - one role-`in` Buffer per input hash (arg = input position, dtype raw,
//   n = 0, only l1 / hash known); "None" or empty positions are skipped.
// - The log has no addresses: Trace::flow = kHashChain, an output's addr is
//   1 + its own kernel index, an input's 1 + the kernel index of its logged
//   producer (0 when none: its hash links it).
// - Ops outside every module and not in backward (the optimizer's) are
//   grouped into update chains by their hashes (AssignUpdateChains,
//   read/debugmode_common.h, which both DebugMode readers share).
// - Location is the provenance's src (reports print "at FILE:LINE").
// - The log records no environment and no launches (Trace::records_*).
//
// A log cut short (the job was killed, the disk filled) is read up to its
// last complete block and marked truncated: a last line without its '\n' is
// cut mid-line and drops its block; a last block that lacks the blank line
// every earlier block was followed by, or a key every earlier block of its
// form (full or hash-only) had, or that holds neither statistics nor hashes,
// was cut mid-block and is dropped. A lone block is complete with its blank
// line or with what the tracer always writes for its form. A last block that
// is hash-only is not a cut. A preamble total larger than the number of
// blocks also marks the log truncated. The log is streamed (LineReader):
// memory holds the model, not the file. Each line is tokenized alone
// (debugmode_log_line.h: its kind and fields); the block parser decides what
// it means where it stands and judges the last block.
//
// Errors: InvalidArgument "PATH:LINE: reason" (a stat line outside a block,
// an unparsable number or shape, a number out of range of a double, a block
// header without a key, a log without blocks or preamble).
//
// Example (the "debugmode-log" row of read/importer.h):
//   absl::StatusOr<Trace> t = ReadTrace("dumps/rank_0_activations.log");
#ifndef NUMTRACE_ANALYZER_READ_DEBUGMODE_READER_H_
#define NUMTRACE_ANALYZER_READ_DEBUGMODE_READER_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/importer.h"
#include "analyzer/read/line_reader.h"

namespace numtrace::analyzer {

// The importer row's read; the caller catches std::bad_alloc.
[[nodiscard]] absl::StatusOr<Trace> ReadDebugModeLines(LineReader& reader);

// The op name of a key: "layers.0.attention.wq/op_3_mm" -> "mm"; a key
// without the "/op_<N>_" part is returned whole.
std::string_view DebugModeOpName(std::string_view key);

// Provenance of a block key: "FSDPLlama3Model.layers.1.feed_forward.w1/op_0_addmm"
// -> scope "layers.1.feed_forward.w1" (the root's class name dropped, as
// PyTorch FQNs have it), op "aten::addmm". No scope for "<none>" or a key
// without "/op_N_".
struct DebugModeProvenance {
  std::optional<std::string_view> scope;  // a view into the key
  std::string op;
};
DebugModeProvenance DebugModeProvenanceOf(std::string_view key);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_DEBUGMODE_READER_H_
