#include "analyzer/align/kernel_keys.h"

#include <string>

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

bool IsOutput(const Buffer& b) { return b.role != Role::kIn; }

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
  auto name_keys = [&](const Kernel& k) -> const NameKeys& {
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

  std::vector<KernelKeys> keys(trace.kernels.size());
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const Kernel& k = trace.kernels[i];
    const NameKeys& n = name_keys(k);
    uint64_t layout = 0x51ed270b27e3fULL, content = 0x2545f4914f6cdd1dULL;
    KernelKeys& out = keys[i];
    uint64_t best_bytes = 0;
    auto buffers = trace.BuffersOf(k);
    for (size_t j = 0; j < buffers.size(); ++j) {
      const Buffer& b = buffers[j];
      layout = HashCombine(HashCombine(layout, b.bytes), static_cast<uint64_t>(b.dtype));
      if (IsOutput(b)) {
        content = HashCombine(content, b.stats.hash);
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
  }
  return keys;
}

}  // namespace numtrace::analyzer
