// File: analyzer/align/alignment.h
//
// The result of aligning two kernel streams: which kernel of run A pairs with
// which kernel of run B, and how each pair was made. Produced by align/,
// consumed by judge/ and report/.
//
// Example:
//   Alignment al = Align(a, b);  // analyzer/align/aligner.h
//   for (const KernelPair& p : al.pairs) a.Name(a.kernels[p.a]);  // MatchMethodName(p.method)
#ifndef NUMTRACE_ANALYZER_ALIGN_ALIGNMENT_H_
#define NUMTRACE_ANALYZER_ALIGN_ALIGNMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/format/enum_list.h"

namespace numtrace::analyzer {

// How a pair was made; the names are the summary's `match_methods` keys and
// the HTML report's method chips.
#define NUMTRACE_MATCH_METHODS(X)                                                               \
  X(kOverride, "override") /* forced by the user's --override file                          */ \
  X(kExact, "exact")       /* same kernel name (as recorded), in launch order               */ \
  X(kFuzzy, "fuzzy")       /* names equal after normalisation (counters, templates, GEMMs)  */ \
  X(kValue, "value")       /* paired by content: equal output hashes or close statistics    */

enum class MatchMethod : uint8_t { NUMTRACE_MATCH_METHODS(NUMTRACE_ENUMERATOR) };
inline constexpr std::string_view kMatchMethodNames[] = {NUMTRACE_MATCH_METHODS(NUMTRACE_ENUM_NAME)};
inline constexpr int kMatchMethodCount = sizeof(kMatchMethodNames) / sizeof(kMatchMethodNames[0]);
inline std::string_view MatchMethodName(MatchMethod m) { return kMatchMethodNames[static_cast<int>(m)]; }

struct KernelPair {
  uint32_t a = 0;  // index into Trace::kernels of run A
  uint32_t b = 0;  // index into Trace::kernels of run B
  MatchMethod method = MatchMethod::kExact;
};

struct Alignment {
  std::vector<KernelPair> pairs;   // sorted by a; b increasing too except for overrides
  std::vector<uint32_t> only_a;    // unpaired kernels of A, ascending
  std::vector<uint32_t> only_b;    // unpaired kernels of B, ascending
  std::vector<std::string> warnings;  // e.g. override keys that matched nothing
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_ALIGN_ALIGNMENT_H_
