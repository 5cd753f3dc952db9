// File: analyzer/judge/origin_hints.h
//
// One-line hints for kernels whose outputs differ between two identical
// runs although their inputs did not: the known families of run-to-run
// nondeterminism on GPUs, each with what makes it deterministic. One list
// (origin_hints.cc) holds them all; the first family whose pattern matches
// the kernel name wins. Beside origins.h: numtrace-diff prints the hint of
// each origin it lists, `numtrace twice` of each origin of its hunt.
//
// Example:
//   const OriginHint* h = HintForKernel("void at::native::indexFuncSmallIndex<float, ...>");
//   h->family  // "index_add/scatter with atomics"
//   h->hint    // "torch.use_deterministic_algorithms(True) ..."
#ifndef NUMTRACE_ANALYZER_JUDGE_ORIGIN_HINTS_H_
#define NUMTRACE_ANALYZER_JUDGE_ORIGIN_HINTS_H_

#include <span>
#include <string_view>

namespace numtrace::analyzer {

struct OriginHint {
  std::string_view family;
  std::string_view pattern;  // ECMAScript regex, case-insensitive, on the kernel name
  std::string_view hint;
};

std::span<const OriginHint> KnownOriginFamilies();

// nullptr when no family matches.
const OriginHint* HintForKernel(std::string_view kernel_name);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_ORIGIN_HINTS_H_
