// File: shim/engine/kernel_cache.h
//
// What the engine knows about each kernel function, computed once per
// function handle: demangled name, dtypes (shim/engine/dtype_inference.h,
// overridden by user annotations), whether the kernel filters let it
// through, and whether it starts a step (NUMTRACE_STEP_MODE=kernel:REGEX).
//
// Lookups are lock-free: the publish-once HandleTable shared with the CUPTI
// layer's layout cache (shim/engine/handle_table.h), so the kernel step mode
// can ask on every launch without a lock. Entries are never freed while the
// cache lives; an entry replaced after a new annotation (or a reused handle)
// stays alive, so a reader holding the old pointer stays safe. Misses (first
// launch of a kernel) take a mutex.
//
// Example:
//   KernelCache cache(config, &annotations);
//   const KernelInfo& k = cache.Get(launch.function, launch.symbol);
//   k.DTypeOf(2);  // {DType::kBF16, DTypeSource::kName}
#ifndef NUMTRACE_SHIM_ENGINE_KERNEL_CACHE_H_
#define NUMTRACE_SHIM_ENGINE_KERNEL_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/format/dtype.h"
#include "shim/engine/annotations.h"
#include "common/settings/config.h"
#include "common/settings/dump_selector.h"
#include "shim/engine/dtype_inference.h"
#include "shim/engine/handle_table.h"

namespace numtrace::shim {

// Named apart from the CUPTI layer's KernelDescription (one library, one
// definition per name: g++ -flto -Wodr checks it in scripts/test.sh). Its
// names (symbol, demangled) are what the dump selector reads; entries stay
// where they are while the cache lives, as the selector needs.
struct KernelInfo : settings::KernelNames {
  KernelDTypes inferred;
  ArgDTypes annotated;      // empty without an annotation
  bool selected = true;     // passes NUMTRACE_KERNEL / NUMTRACE_KERNEL_EXCLUDE
  bool starts_step = false; // matches kernel:REGEX
  uint64_t generation = 0;  // annotation generation it was built under

  // The dtype of buffers found in parameter `arg`, and how it was decided.
  std::pair<DType, DTypeSource> DTypeOf(uint32_t arg) const;
};

class KernelCache {
 public:
  KernelCache(const settings::Config& config, const AnnotationTable* annotations);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // Lock-free when present. The returned reference lives as long as the cache.
  const KernelInfo& Get(uint64_t function, std::string_view symbol);
  // Kernel step mode, per launch: lock-free after the first launch of a kernel.
  bool StartsStep(uint64_t function, std::string_view symbol) {
    return Get(function, symbol).starts_step;
  }
  size_t size() const { return table_.size(); }

 private:
  static uint64_t KeyOf(uint64_t function, std::string_view symbol);
  bool Current(const KernelInfo* info, uint64_t function, std::string_view symbol) const;
  const KernelInfo& Build(uint64_t key, uint64_t function, std::string_view symbol);
  std::unique_ptr<KernelInfo> Make(std::string_view symbol) const;

  const settings::Config& config_;
  const AnnotationTable* annotations_;
  HandleTable<KernelInfo> table_;
  std::mutex mu_;  // one Build at a time: a kernel is made once
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_KERNEL_CACHE_H_
