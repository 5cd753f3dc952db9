// File: analyzer/align/kernel_keys.h
//
// Per-kernel matching keys, finest first, computed once per trace so the
// aligner compares 64-bit integers instead of strings. Name work (demangle,
// normalise, family) is done once per distinct name. Keys of two traces are
// comparable: they hash the strings, never the traces' own string ids.
//
// Example:
//   std::vector<KernelKeys> ka = ComputeKernelKeys(trace_a);
//   ka[i].level[kKeyName] == kb[j].level[kKeyName]  // same recorded name
#ifndef NUMTRACE_ANALYZER_ALIGN_KERNEL_KEYS_H_
#define NUMTRACE_ANALYZER_ALIGN_KERNEL_KEYS_H_

#include <cstdint>
#include <vector>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// Key levels, finest (most trusted) first. "layout" is the (bytes, dtype) of
// every buffer in order; "content" the hashes of the output buffers.
enum KeyLevel : int {
  kKeyNameLayoutContent = 0,
  kKeyNameLayout,
  kKeyName,
  kKeyNormalizedLayout,
  kKeyNormalized,
  kKeyFamilyLayout,
  kKeyFamily,
  kKeyLevelCount,
};

struct KernelKeys {
  uint64_t level[kKeyLevelCount];
  // The primary output: the largest out/unknown buffer (first on ties). Value
  // matching compares these; index -1 (and hash 0) when there is none.
  int32_t primary_output = -1;
  uint64_t primary_hash = 0;
};

std::vector<KernelKeys> ComputeKernelKeys(const Trace& trace);

// Names the ops of in-place update chains (Trace::update_chain: an
// optimizer's ops of one parameter) by their op, layout, chain and place in
// it instead of their module path and counter, in both traces' name keys
// (content: the primary output's hash), when both hold the same chains - the same ops
// in the same chains in the same order, as eager and compiled runs of one
// model do: chain k of A is then chain k of B, whatever other ops without a
// module shifted their "<none>/op_N" counters. Otherwise (a parameter only
// one run has renumbers every later chain) the keys are left as they are.
void AddUpdateChainKeys(const Trace& a, std::vector<KernelKeys>* ka, const Trace& b, std::vector<KernelKeys>* kb);

// 64-bit string hash, equal across traces and processes.
uint64_t HashString(std::string_view s);
uint64_t HashCombine(uint64_t seed, uint64_t value);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_ALIGN_KERNEL_KEYS_H_
