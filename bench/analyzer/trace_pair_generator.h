// File: bench/analyzer/trace_pair_generator.h
//
// Writes a pair of trace-format-v1 files (runs A and B of one training job)
// that differ the way real pairs do, for benchmarks, tests and examples:
//   - A cycles the step plan; B runs the same steps, but per step it
//     launches an extra dtype cast and an extra fill, skips one elementwise
//     kernel, runs two of A's elementwise kernels as one fused Triton
//     kernel, shifts the Inductor counter of every Triton name
//     (`..._fused_add_3` -> `..._fused_add_4`) and runs the two most used
//     GEMMs as another architecture's kernels;
//   - outputs agree bit for bit (equal hashes) except for reduction-order
//     noise (far within rtol 1e-5) on the swapped GEMMs, the fused kernel
//     and a tenth of the reductions;
//   - from the planted divergence on, B's outputs are off by 1e-3 and more,
//     and halfway from there to the end B's float outputs start holding NaN.
//
// Example:
//   PairOptions opt;
//   opt.kernels = 1000;
//   absl::StatusOr<PairSummary> s = WriteTracePair(plan, opt, "a.jsonl", "b.jsonl");
//   s->divergence_a_seq;  // 600: the first A kernel whose B partner diverged
#ifndef NUMTRACE_BENCH_ANALYZER_TRACE_PAIR_GENERATOR_H_
#define NUMTRACE_BENCH_ANALYZER_TRACE_PAIR_GENERATOR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/analyzer/step_plan.h"

namespace numtrace::bench {

inline constexpr uint64_t kNoSeq = ~uint64_t{0};

struct PairOptions {
  uint64_t kernels = 200000;  // A's kernel count; B's is within a few per step of it
  uint64_t seed = 1;
  uint64_t diverge_at = kNoSeq;  // A seq; kNoSeq: 60% of the way in
  bool plant_nan = true;         // NaN in B halfway between the divergence and the end
};

struct PairSummary {
  uint64_t a_kernels = 0, b_kernels = 0;
  uint64_t a_bytes = 0, b_bytes = 0;
  uint64_t divergence_a_seq = kNoSeq, divergence_b_seq = kNoSeq;
  uint64_t nan_b_seq = kNoSeq;  // first B kernel with a NaN output
};

// Fails (naming the file) when an output cannot be written.
absl::StatusOr<PairSummary> WriteTracePair(const StepPlan& plan, const PairOptions& options,
                                           const std::string& path_a, const std::string& path_b);

}  // namespace numtrace::bench

#endif  // NUMTRACE_BENCH_ANALYZER_TRACE_PAIR_GENERATOR_H_
