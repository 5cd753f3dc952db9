// File: analyzer/align/aligner.h
//
// Pairs the kernels of run A with the kernels of run B. Survives extra or
// missing kernels (fills, casts, copies, collectives), names that differ
// (Inductor counters, template arguments, a different GEMM kernel on another
// GPU), fusion (one B kernel writes what two A kernels wrote: B's kernel
// pairs with the A kernel whose output it reproduces) and names shared by
// many different kernels (early Triton `triton__0d1d2d`, told apart by buffer
// layout and content). docs/diffing.md explains the method in plain words.
//
// Near-linear: hashing, patience-style unique anchors with LIS, recursion
// into the gaps with coarser keys, and only bounded work (<= 64x64 dynamic
// programming, or a windowed greedy pass) where nothing anchors.
//
// Example:
//   AlignOptions options;
//   options.overrides = *ReadOverrideFile("pairs.txt");
//   Alignment al = Align(trace_a, trace_b, options);
//   // al.pairs sorted by a; al.only_a / al.only_b; al.warnings
#ifndef NUMTRACE_ANALYZER_ALIGN_ALIGNER_H_
#define NUMTRACE_ANALYZER_ALIGN_ALIGNER_H_

#include <optional>

#include "analyzer/align/alignment.h"
#include "analyzer/align/override_file.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

struct AlignOptions {
  // Forced pairs, applied before anything else. A rule whose key matches
  // nothing (or whose kernel is already forced) becomes a warning.
  std::optional<Overrides> overrides;
  // Leaves with at most this many kernels on each side are solved exactly
  // (maximum-weight order-preserving matching); larger ones greedily.
  int max_dp_side = 64;
};

// Pairs are sorted by a. b increases along the pairs too, except for override
// pairs that the user forced out of order (those are kept as given; all
// other pairs respect the order of in-order overrides).
Alignment Align(const Trace& a, const Trace& b, const AlignOptions& options = {});

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_ALIGN_ALIGNER_H_
