// File: launcher/origin_hints.h
//
// One-line hints for kernels whose outputs differ between two identical
// runs although their inputs did not: the known families of run-to-run
// nondeterminism on GPUs, each with what makes it deterministic. One list
// (origin_hints.cc) holds them all; the first family whose pattern matches
// the kernel name wins.
//
// Example:
//   const OriginHint* h = HintForKernel("void at::native::indexFuncSmallIndex<float, ...>");
//   h->family  // "index_add/scatter with atomics"
//   h->hint    // "torch.use_deterministic_algorithms(True) ..."
#ifndef NUMTRACE_LAUNCHER_ORIGIN_HINTS_H_
#define NUMTRACE_LAUNCHER_ORIGIN_HINTS_H_

#include <span>
#include <string_view>

namespace numtrace::launcher {

struct OriginHint {
  std::string_view family;
  std::string_view pattern;  // ECMAScript regex, case-insensitive, on the kernel name
  std::string_view hint;
};

std::span<const OriginHint> KnownOriginFamilies();

// nullptr when no family matches.
const OriginHint* HintForKernel(std::string_view kernel_name);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_ORIGIN_HINTS_H_
