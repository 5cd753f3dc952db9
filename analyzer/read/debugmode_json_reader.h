// File: analyzer/read/debugmode_json_reader.h
//
// Reads the JSON logs of PyTorch's DebugMode (`DebugMode.save_logs(logs,
// path)`, torch.utils._debug_mode: one JSON object, `"format":
// "torch.utils._debug_mode.DebugMode.logs"`, `"version": 1`, `"logs": [...]`)
// into the model, as the `debugmode-json` row of read/importer.h. The format
// is PyTorch's (read in torch 2.15's _debug_mode/_calls.py, the source of
// truth); docs/format.md 1.5 says what is taken from it:
//
// - `op` records: one operator record (RecordLevel::kOp) each, named
//   "<module path>/<op_name>" ("<none>/aten::mm" outside any module),
//   demangled = op_name, provenance op = op_name without its overload.
//   Under `log_tensor_hashes(hash_fn=[...], hash_inputs=True)` its `log`
//   holds `hash` (the outputs) and `input_hash` (the args and kwargs, taken
//   before the op ran); each tensor's value is the norm (a float64 L1 norm,
//   printed with all its digits: Fingerprint::kPrintedStats, 17 digits), or
//   `hash_tensor` (an integer, bitwise: kHashTensor), or both as a pair.
//   Shapes and dtypes come from the text (`t: f32[2, 3]`) of output_str and
//   args_str/kwargs_str, tensor by tensor.
// - `annotate` records with header "nn.Mod..." (record_nn_module=True): a
//   module entered at call_depth d; every record deeper than d until the next
//   one at depth <= d is inside it. Its FQN (the root module's class name
//   dropped) is the scope of the ops inside, their phase forward. A "record
//   function" annotation "Optimizer.step#..." makes the ops inside it the
//   optimizer phase. (Backward ops carry no module: no scope, no phase.)
// - `triton_kernel` records: one kernel record (kKernel), named by
//   kernel_name; a tensor whose pre and post hashes differ was written (an
//   `out` buffer, its post hash), one whose hashes agree only read (`in`).
// - The log has no addresses (FlowKey::kHashChain: an input is the last
//   output with its hash), no environment and no launches to dump. The
//   optimizer's ops are grouped into update chains (AssignUpdateChains,
//   read/debugmode_common.h).
//
// Not fatal, counted (Trace::skipped): records of types that carry no tensor
// values (redistribute, output_placement, other annotations), records of a
// type this reader does not know, records with a missing or mistyped field.
// Fatal (InvalidArgument "PATH: ..."): not JSON or cut short, another
// `format`, a `version` other than 1 ("this numtrace reads version 1"), no
// `logs` list.
//
// Example:
//   absl::StatusOr<Trace> t = ReadTrace("eager.json");  // sniffed by content
#ifndef NUMTRACE_ANALYZER_READ_DEBUGMODE_JSON_READER_H_
#define NUMTRACE_ANALYZER_READ_DEBUGMODE_JSON_READER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/importer.h"
#include "analyzer/read/line_reader.h"

namespace numtrace::analyzer {

// The first bytes of a DebugMode JSON log: an object whose "format" is
// PyTorch's name for it.
bool SniffDebugModeJson(std::string_view head);

[[nodiscard]] absl::StatusOr<Trace> ReadDebugModeJson(LineReader& reader);

inline constexpr SkipCounter kDebugModeJsonSkips[] = {
    {"record_without_values", "records that carry no tensor values (redistribute, output_placement, other annotations)",
     false},
    {"unknown_record_type", "records of a type this reader does not know (a later torch): skipped", true},
    {"bad_record", "records with a missing or mistyped field: skipped", true},
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_DEBUGMODE_JSON_READER_H_
