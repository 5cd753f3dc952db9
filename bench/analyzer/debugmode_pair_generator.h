// File: bench/analyzer/debugmode_pair_generator.h
//
// Writes a pair of torchtitan DebugMode activation logs (the format
// analyzer/read/debugmode_reader.h accepts: a preamble, then one block per
// aten op keyed `[layers.3.attention.wq/op_1_mm]` with Shape, Dtype, L2 norm,
// Min, Max, Mean, Output hash (float64 L1), Input hashes, Location, Phase) for
// a Llama-3-8B-like model, forward and backward, step after step. B differs
// from A as a refactored run would: every attention_norm casts at its start
// instead of near its end (an extra and a missing `_to_copy`, and shifted op
// counters between them), the wk projection reshapes with `view` instead of
// `_unsafe_view`, some matmuls show reduction-order noise (visible in the
// full-precision Output hash only), then the planted divergence and, halfway
// from there to the end, NaN.
//
// Example:
//   PairOptions opt;
//   opt.kernels = 100000;  // ops in A
//   absl::StatusOr<PairSummary> s =
//       WriteDebugModePair(opt, "a/rank_0_activations.log", "b/rank_0_activations.log");
#ifndef NUMTRACE_BENCH_ANALYZER_DEBUGMODE_PAIR_GENERATOR_H_
#define NUMTRACE_BENCH_ANALYZER_DEBUGMODE_PAIR_GENERATOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "bench/analyzer/trace_pair_generator.h"

namespace numtrace::bench {

// Counts in the summary are ops (blocks); seqs are 0-based block indices.
absl::StatusOr<PairSummary> WriteDebugModePair(const PairOptions& options,
                                               const std::string& path_a,
                                               const std::string& path_b);

}  // namespace numtrace::bench

#endif  // NUMTRACE_BENCH_ANALYZER_DEBUGMODE_PAIR_GENERATOR_H_
