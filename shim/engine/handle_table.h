// File: shim/engine/handle_table.h
//
// A publish-once table from a 64-bit handle (CUfunction/CUkernel, or a
// name hash) to an immutable entry, shared by the two per-kernel caches of
// the launch path (shim/engine/kernel_cache.h: names, dtypes, filters;
// shim/cupti/kernel_info_cache.h: parameter layouts). Lookups take no lock
// and allocate nothing: open addressing over two atomic arrays, one masked
// linear probe. Publishing takes a mutex (the first launch of a kernel,
// rare): the entry is stored before its key, with release order, so a
// reader that sees the key sees the entry. A key may be published again (a
// handle reused by another kernel after a module unload, an annotation that
// changes dtypes): the new entry replaces the old one, which stays alive
// until the table dies, so a reader holding it stays safe. When a probe
// runs long the entry goes to an overflow map behind the mutex: never lost.
// Key 0 is the empty slot and is never stored.
//
// Example:
//   HandleTable<KernelDescription> table;
//   const KernelDescription* k = table.Find(fn);
//   if (k == nullptr) k = table.PublishIfAbsent(fn, std::make_unique<KernelDescription>(...));
#ifndef NUMTRACE_SHIM_ENGINE_HANDLE_TABLE_H_
#define NUMTRACE_SHIM_ENGINE_HANDLE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace numtrace::shim {

template <typename T>
class HandleTable {
 public:
  static constexpr size_t kSlotsLog2 = 15;
  static constexpr size_t kSlots = size_t{1} << kSlotsLog2;
  static constexpr size_t kMaxProbe = 64;

  HandleTable() : keys_(new std::atomic<uint64_t>[kSlots]), values_(new std::atomic<const T*>[kSlots]) {
    for (size_t i = 0; i < kSlots; ++i) {
      keys_[i].store(0, std::memory_order_relaxed);
      values_[i].store(nullptr, std::memory_order_relaxed);
    }
  }
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // The current entry for `key`, or null. No lock unless the probe ran into
  // the overflow (a nearly full table).
  const T* Find(uint64_t key) const {
    if (key == 0) return nullptr;
    size_t i = Home(key);
    for (size_t probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & (kSlots - 1)) {
      const uint64_t k = keys_[i].load(std::memory_order_acquire);
      if (k == key) return values_[i].load(std::memory_order_acquire);
      if (k == 0) return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = overflow_.find(key);
    return it == overflow_.end() ? nullptr : it->second;
  }

  // Stores `value` for `key`, replacing any entry; returns the stored entry
  // (null only for key 0).
  const T* Publish(uint64_t key, std::unique_ptr<T> value) { return Store(key, std::move(value), true); }
  // Stores `value` only when `key` has no entry; returns the entry there now.
  const T* PublishIfAbsent(uint64_t key, std::unique_ptr<T> value) {
    return Store(key, std::move(value), false);
  }

  size_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  static size_t Home(uint64_t key) {
    // Handles are pointers: the low bits are alignment, so mix first.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - kSlotsLog2));
  }

  const T* Store(uint64_t key, std::unique_ptr<T> value, bool replace) {
    if (key == 0 || value == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    const T* stored = value.get();
    size_t i = Home(key);
    for (size_t probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & (kSlots - 1)) {
      const uint64_t k = keys_[i].load(std::memory_order_relaxed);
      if (k == key) {
        if (!replace) return values_[i].load(std::memory_order_relaxed);
        owned_.push_back(std::move(value));
        values_[i].store(stored, std::memory_order_release);
        return stored;
      }
      if (k == 0) {
        owned_.push_back(std::move(value));
        values_[i].store(stored, std::memory_order_release);
        keys_[i].store(key, std::memory_order_release);
        size_.fetch_add(1, std::memory_order_relaxed);
        return stored;
      }
    }
    auto [it, inserted] = overflow_.try_emplace(key, stored);
    if (!inserted && !replace) return it->second;
    it->second = stored;
    owned_.push_back(std::move(value));
    if (inserted) size_.fetch_add(1, std::memory_order_relaxed);
    return stored;
  }

  std::unique_ptr<std::atomic<uint64_t>[]> keys_;
  std::unique_ptr<std::atomic<const T*>[]> values_;
  std::atomic<size_t> size_{0};
  mutable std::mutex mu_;  // publishing, overflow_, owned_
  std::unordered_map<uint64_t, const T*> overflow_;
  std::vector<std::unique_ptr<T>> owned_;  // every entry ever published
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_HANDLE_TABLE_H_
