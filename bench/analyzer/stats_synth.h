// File: bench/analyzer/stats_synth.h
//
// Plausible buffer statistics for synthetic traces: min/max/sum/l1/l2 that
// are consistent with n and with each other (|sum| <= l1 <= sqrt(n)*l2,
// l2 <= sqrt(n)*max|x|), min/max representable in the dtype, integer
// buffers that look like indices, fills that are constant. The values are a
// pure function of `key`, so two runs that computed the same tensor write
// the same stats and hash; a perturbation models what differs between runs.
//
// Example:
//   Perturbation noise{.rel = 1e-7, .hash_salt = 2};   // reduction-order noise
//   BufferStats a = SynthStats(key, DType::kBF16, 1 << 20, {}, {});
//   BufferStats b = SynthStats(key, DType::kBF16, 1 << 20, {}, noise);
//   // b.l2 / a.l2 - 1 is ~1e-7; b.hash != a.hash; b.min == a.min
#ifndef NUMTRACE_BENCH_ANALYZER_STATS_SYNTH_H_
#define NUMTRACE_BENCH_ANALYZER_STATS_SYNTH_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/format/stats.h"

namespace numtrace::bench {

struct ValueShape {
  bool constant = false;  // a fill: every element the same
  bool nonneg = false;    // squares, norms, rsqrt: no element below zero
};

struct Perturbation {
  double rel = 0;          // relative change of sum/l1/l2 (and min/max when >= 1e-4)
  uint64_t hash_salt = 0;  // 0: the same bytes, so the same hash
  double nan_fraction = 0; // share of elements that became NaN
};

BufferStats SynthStats(uint64_t key, DType dtype, uint64_t n, ValueShape shape,
                       const Perturbation& p);

}  // namespace numtrace::bench

#endif  // NUMTRACE_BENCH_ANALYZER_STATS_SYNTH_H_
