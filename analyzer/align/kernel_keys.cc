#include "analyzer/align/kernel_keys.h"

#include <bit>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/read/line_reader.h"
#include "common/names/normalize.h"

namespace numtrace::analyzer {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct NameKeys {
  uint64_t name = 0, normalized = 0, family = 0;
  bool done = false;
};

}  // namespace

uint64_t HashString(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Mix(h);
}

uint64_t HashCombine(uint64_t seed, uint64_t value) { return Mix(seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6))); }

std::vector<KernelKeys> ComputeKernelKeys(const Trace& trace) {
  std::vector<NameKeys> by_name(trace.strings.size());
  std::vector<NameKeys> by_name_backward;
  auto name_keys = [&](size_t i, const Kernel& k) -> const NameKeys& {
    if (k.level == RecordLevel::kOp) {
      // An operator "module/op_N_name": the module path and op name are
      // strong hints, the per-module counter N is not (activation
      // checkpointing and compile shift it), so it takes no part. The phase
      // does: name = (phase, module, op), normalized = (phase, op) for
      // compiled logs without module paths, family = op.
      if (by_name_backward.empty()) by_name_backward.resize(trace.strings.size());
      const bool backward = trace.PhaseOf(k) == Phase::kBackward;
      NameKeys& n = (backward ? by_name_backward : by_name)[k.name];
      if (!n.done) {
        // NormalizedName drops the counter and a root class prefix:
        // "FSDPLlama3Model.layers.0.x/op_3_mm" -> "layers.0.x/mm".
        const std::string_view op = trace.Demangled(k);
        const uint64_t phase = backward ? 0xb0a4dULL : 0xf04dULL;
        n.name = HashCombine(phase, HashString(NormalizedName(trace.Name(k))));
        n.normalized = HashCombine(phase, HashString(op));
        n.family = HashString(op);
        n.done = true;
      }
      return n;
    }
    NameKeys& n = by_name[k.name];
    if (!n.done) {
      // The demangled name is what normalisation needs; the recorded name is
      // what "exact" means.
      std::string_view demangled = trace.Demangled(k);
      n.name = HashString(trace.Name(k));
      n.normalized = HashString(NormalizedName(demangled));
      n.family = HashString(KernelFamily(demangled));
      n.done = true;
    }
    return n;
  };

  std::vector<KernelKeys> keys;
  keys.reserve(trace.kernels.size());
  keys.resize(trace.kernels.size());
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const Kernel& k = trace.kernels[i];
    const NameKeys& n = name_keys(i, k);
    const bool op = k.level == RecordLevel::kOp;
    uint64_t layout = 0x51ed270b27e3fULL, content = 0x2545f4914f6cdd1dULL;
    KernelKeys& out = keys[i];
    uint64_t best_bytes = 0;
    auto buffers = trace.BuffersOf(k);
    for (size_t j = 0; j < buffers.size(); ++j) {
      const Buffer& b = buffers[j];
      // An operator's inputs are whatever the op read (an out= buffer under
      // compile is one more): its layout is its outputs'.
      if (!op || b.IsOutput()) {
        layout = HashCombine(HashCombine(layout, b.bytes), static_cast<uint64_t>(b.dtype));
      }
      if (b.IsOutput()) {
        content = HashCombine(content, b.stats.hash);
        if (b.Has(kPrintedStats)) {  // every printed value: L1 alone is often a constant (softmax)
          const PrintedStats& l = trace.printed[k.first_buffer + j];
          for (double v : {l.l2, l.min, l.max, l.mean}) content = HashCombine(content, std::bit_cast<uint64_t>(v));
        }
        if (out.primary_output < 0 || b.bytes > best_bytes) {
          out.primary_output = static_cast<int32_t>(j);
          best_bytes = b.bytes;
          out.primary_hash = b.stats.hash;
        }
      }
    }
    out.level[kKeyNameLayoutContent] = HashCombine(HashCombine(n.name, layout), content);
    out.level[kKeyNameLayout] = HashCombine(n.name, layout);
    out.level[kKeyName] = n.name;
    out.level[kKeyNormalizedLayout] = HashCombine(n.normalized, layout);
    out.level[kKeyNormalized] = n.normalized;
    out.level[kKeyFamilyLayout] = HashCombine(n.family, layout);
    out.level[kKeyFamily] = n.family;
    if (op) {
      // Ops of another shape or dtype are never the same op: every level
      // holds the layout.
      out.level[kKeyName] = out.level[kKeyNameLayout];
      out.level[kKeyNormalized] = out.level[kKeyNormalizedLayout];
      out.level[kKeyFamily] = out.level[kKeyFamilyLayout];
    }
  }
  return keys;
}

namespace {

// The chain ops of a trace in order, each as (its chain and place, its op).
std::vector<std::pair<uint64_t, std::string_view>> ChainOps(const Trace& t) {
  std::vector<std::pair<uint64_t, std::string_view>> ops;
  for (size_t i = 0; i < t.update_chain.size(); ++i) {
    if (t.update_chain[i] != 0) ops.emplace_back(t.update_chain[i], t.Demangled(t.kernels[i]));
  }
  return ops;
}

// A chain op's name keys: (phase, op, layout) and its chain and place, in
// place of the module path and counter ("<none>/op_N").
void FoldChains(const Trace& t, std::vector<KernelKeys>* keys) {
  for (size_t i = 0; i < t.update_chain.size(); ++i) {
    if (t.update_chain[i] == 0) continue;
    KernelKeys& k = (*keys)[i];
    const uint64_t name = HashCombine(k.level[kKeyNormalizedLayout], t.update_chain[i]);
    k.level[kKeyName] = k.level[kKeyNameLayout] = name;
    k.level[kKeyNameLayoutContent] = HashCombine(name, k.primary_hash);
  }
}

}  // namespace

void AddUpdateChainKeys(const Trace& a, std::vector<KernelKeys>* ka, const Trace& b, std::vector<KernelKeys>* kb) {
  if (a.update_chain.empty() || ChainOps(a) != ChainOps(b)) return;
  FoldChains(a, ka);
  FoldChains(b, kb);
}

}  // namespace numtrace::analyzer
