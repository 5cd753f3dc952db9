// File: analyzer/read/debugmode_reader.h
//
// Reads torchtitan's numerics activation logs (`rank_<R>_activations.log`,
// written by torchtitan/tools/activation_tracer.py, DebugMode-based) into the
// same model as our own traces, so numtrace-diff can compare them too. A log
// is a short preamble ("Total captured activations: N", "Excluded ops
// dispatched: ...", a "====" rule) and then one block per captured op:
//
//   [layers.0.attention.wq/op_3_mm]
//     Shape: torch.Size([8, 2048, 4096]), Dtype: torch.bfloat16
//     L2 norm:  1.234568e+03
//     Min:      -6.156250e+00
//     Max:      7.031250e+00
//     Mean:     1.250000e-03
//     Output hash: 1021337.25            (float64 L1 norm; "a, b" for tuples)
//     Input hashes: 5.5e+02, 7.0e+01
//     Location: common/attention.py:534
//     Phase: backward                    (absent: forward)
//
// `Shape` and `Dtype` may also be on lines of their own, and the key may carry
// a root-class prefix (`FSDPLlama3Model.layers.0...`); both are accepted.
// Unknown keys are ignored; values may be lists (tuple outputs); nan / inf
// values are accepted.
//
// Mapping (one Kernel per block, seq = 0-based block index):
// - name = the bracketed key, demangled = the op name ("mm").
// - one role-`out` Buffer per output (arg = output index): dtype from the
//   torch dtype (`raw` when unknown), n = product of the shape, bytes =
//   n * dtype size, min / max / l2 from the log, sum = mean * n, l1 = the
//   "Output hash" (else an "L1 norm" line), and hash = the bit pattern of
//   that L1 double: equal "hashes" of a DebugMode trace mean equal L1 norms,
//   not equal bytes (Trace::source = kDebugMode says so). Without any L1 the
//   hash mixes the bits of the other statistics.
// - Non-finite values: the log holds aggregates, not counts, so counts are
//   lower bounds. nan = 1 when any statistic is NaN (torch's min / max / norms
//   propagate NaN); else inf = 1 when Max is +inf and ninf = 1 when Min is
//   -inf. An infinite norm or mean with finite Min / Max is a float32
//   overflow of the reduction, not an Inf element, and counts nothing.
//   has_range only when Min and Max are both present and finite; n is raised
//   to at least the non-finite count.
// - one role-`in` Buffer per input hash (arg = input position, dtype raw,
//   n = 0, only l1 / hash known); "None" or empty positions are skipped.
// Phase and Location have no place in the model and are not kept.
//
// A log cut short (the job was killed, the disk filled) is read up to its
// last complete block and marked truncated, like a JSONL trace without a
// footer: a last line without its '\n' is cut mid-line and drops its block;
// a last block that lacks the blank line every earlier block was followed
// by, or a key every earlier block had, was cut mid-block and is dropped.
// A preamble total larger than the number of blocks also marks it truncated.
// The log is streamed (LineReader): memory holds the model, not the file.
//
// Errors: InvalidArgument "PATH:LINE: reason" (a stat line outside a block,
// an unparsable number or shape, a number out of range of a double, a block
// header without a key, a log without blocks or preamble).
//
// Example:
//   absl::StatusOr<Trace> t = ReadDebugModeLog("dumps/rank_0_activations.log");
#ifndef NUMTRACE_ANALYZER_READ_DEBUGMODE_READER_H_
#define NUMTRACE_ANALYZER_READ_DEBUGMODE_READER_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/line_reader.h"

namespace numtrace::analyzer {

[[nodiscard]] absl::StatusOr<Trace> ReadDebugModeLog(const std::string& path);
[[nodiscard]] absl::StatusOr<Trace> ReadDebugModeBuffer(std::string_view contents,
                                                        std::string_view path_for_messages);
// From an open reader (ReadAnyTrace); the caller catches std::bad_alloc.
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
