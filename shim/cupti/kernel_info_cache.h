// File: shim/cupti/kernel_info_cache.h
//
// Per-function-handle cache of KernelDescription (name and parameter
// layout) for the launch hot path, over the publish-once HandleTable the
// engine's KernelCache uses too (shim/engine/handle_table.h): lookups take
// no lock and allocate nothing; entries live as long as the cache (one per
// distinct kernel: thousands, not millions). A handle reused by another
// kernel after a module unload is described again and Replace()d (the
// switchboard notices by the callback's symbolName), so a reused handle
// never gets the old kernel's layout.
//
// Example:
//   KernelInfoCache cache;
//   const KernelDescription* k = cache.Find(fn);
//   if (k == nullptr) k = cache.Insert(fn, std::make_unique<KernelDescription>(...));
#ifndef NUMTRACE_SHIM_CUPTI_KERNEL_INFO_CACHE_H_
#define NUMTRACE_SHIM_CUPTI_KERNEL_INFO_CACHE_H_

#include <cstdint>
#include <memory>

#include "shim/cupti/launch_decoder.h"
#include "shim/engine/handle_table.h"

namespace numtrace::shim {

class KernelInfoCache {
 public:
  // The published entry for `function`, or null. Never blocks on a publisher.
  const KernelDescription* Find(uint64_t function) const { return table_.Find(function); }

  // Publishes `info` unless `function` already has an entry; returns the
  // entry stored for it. `function` 0 is never cached (null).
  const KernelDescription* Insert(uint64_t function, std::unique_ptr<KernelDescription> info) {
    return table_.PublishIfAbsent(function, std::move(info));
  }
  // Publishes `info` in place of any entry (a reused handle).
  const KernelDescription* Replace(uint64_t function, std::unique_ptr<KernelDescription> info) {
    return table_.Publish(function, std::move(info));
  }

  size_t size() const { return table_.size(); }

 private:
  HandleTable<KernelDescription> table_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_KERNEL_INFO_CACHE_H_
