// File: analyzer/tensors/tensor_diff.h
//
// `numtrace-diff --tensors A B`: pairs the buffers of two tensor dumps by
// arg (and, for struct parameters holding several pointers, by their order
// within that arg) and by `when` (before/after the launch), compares each
// pair element by element (tensor_compare.h) and gives the verdict:
// `identical` (every pair bitwise equal, nothing unpaired), `within_tolerance`
// (no element beyond tolerance) or `diverged`.
//
// Example:
//   TensorDiff d = DiffDumps(*side_a, *side_b, {1e-5, 0});
//   VerdictName(d.verdict);       // "diverged"
//   d.pairs[0].cmp.first_mismatch->index;
#ifndef NUMTRACE_ANALYZER_TENSORS_TENSOR_DIFF_H_
#define NUMTRACE_ANALYZER_TENSORS_TENSOR_DIFF_H_

#include <string>
#include <vector>

#include "analyzer/judge/diff_result.h"
#include "analyzer/tensors/dump_reader.h"
#include "analyzer/tensors/tensor_compare.h"

namespace numtrace::analyzer {

struct TensorPair {
  uint32_t arg = 0, nth = 0;
  Role role = Role::kUnknown;   // A's
  std::string when;
  DType dtype = DType::kRaw;    // A's; B's differs only with a warning
  std::string file_a, file_b;
  BufferComparison cmp;
};

struct TensorDiff {
  std::string path_a, path_b;
  std::optional<uint64_t> seq_a, seq_b;
  std::string name_a, name_b;
  ElementTolerance tolerance;
  std::vector<TensorPair> pairs;     // A's order: launch's buffers, before then after
  std::vector<std::string> warnings; // unpaired buffers, dtype or size differences, hash checks
  Verdict verdict = Verdict::kIdentical;
};

TensorDiff DiffDumps(const DumpSide& a, const DumpSide& b, const ElementTolerance& tolerance);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_TENSORS_TENSOR_DIFF_H_
