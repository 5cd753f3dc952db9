// File: shim/cupti/kernel_info_cache.h
//
// Per-function-handle cache of KernelDescription (name and parameter layout) for
// the launch hot path: a fixed-size open-addressing table whose slots are
// claimed with one compare-and-swap, so lookups take no lock and allocate
// nothing. Entries are immutable and live as long as the process (one per
// distinct kernel: thousands, not millions). When the table is full, or a
// racing thread has claimed a slot but not yet published it, Find misses and
// the caller describes the kernel itself (correct, only slower).
//
// A function handle reused after its module is unloaded keeps the old
// entry; jobs that unload modules holding kernels of different signatures
// at the same address are not supported (documented in docs/gpu.md).
//
// Example:
//   KernelInfoCache cache;
//   const KernelDescription* k = cache.Find(fn);
//   if (k == nullptr) k = cache.Insert(fn, std::make_unique<KernelDescription>(...));
#ifndef NUMTRACE_SHIM_CUPTI_KERNEL_INFO_CACHE_H_
#define NUMTRACE_SHIM_CUPTI_KERNEL_INFO_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "shim/cupti/launch_decoder.h"

namespace numtrace::shim {

class KernelInfoCache {
 public:
  static constexpr size_t kSlots = 1 << 14;  // power of two
  static constexpr size_t kMaxProbe = 64;

  KernelInfoCache();
  KernelInfoCache(const KernelInfoCache&) = delete;
  KernelInfoCache& operator=(const KernelInfoCache&) = delete;
  ~KernelInfoCache();

  // The published entry for `function`, or null. Never blocks.
  const KernelDescription* Find(uint64_t function) const;

  // Publishes `info` for `function` and returns the stored entry (a racing
  // thread's if it won). Returns null, dropping `info`, when no slot is free
  // within kMaxProbe; `function` 0 is never cached.
  const KernelDescription* Insert(uint64_t function, std::unique_ptr<KernelDescription> info);

  size_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<uint64_t> key{0};
    std::atomic<const KernelDescription*> value{nullptr};
  };
  static size_t Hash(uint64_t function);

  std::unique_ptr<Slot[]> slots_;
  std::atomic<size_t> size_{0};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_KERNEL_INFO_CACHE_H_
