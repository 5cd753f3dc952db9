// File: shim/cupti/kernel_info_cache.cc
//
// Lock-free KernelDescription table; see kernel_info_cache.h.
#include "shim/cupti/kernel_info_cache.h"

namespace numtrace::shim {

KernelInfoCache::KernelInfoCache() : slots_(new Slot[kSlots]) {}

KernelInfoCache::~KernelInfoCache() {
  for (size_t i = 0; i < kSlots; ++i) delete slots_[i].value.load(std::memory_order_acquire);
}

size_t KernelInfoCache::Hash(uint64_t function) {
  // Handles are pointers: low bits are alignment, so mix before masking.
  uint64_t h = function * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 40);
}

const KernelDescription* KernelInfoCache::Find(uint64_t function) const {
  if (function == 0) return nullptr;
  size_t start = Hash(function);
  for (size_t i = 0; i < kMaxProbe; ++i) {
    const Slot& s = slots_[(start + i) & (kSlots - 1)];
    uint64_t key = s.key.load(std::memory_order_acquire);
    if (key == function) return s.value.load(std::memory_order_acquire);
    if (key == 0) return nullptr;
  }
  return nullptr;
}

const KernelDescription* KernelInfoCache::Insert(uint64_t function, std::unique_ptr<KernelDescription> info) {
  if (function == 0) return nullptr;
  size_t start = Hash(function);
  for (size_t i = 0; i < kMaxProbe; ++i) {
    Slot& s = slots_[(start + i) & (kSlots - 1)];
    uint64_t key = s.key.load(std::memory_order_acquire);
    if (key == 0) {
      uint64_t expected = 0;
      if (s.key.compare_exchange_strong(expected, function, std::memory_order_acq_rel)) {
        const KernelDescription* stored = info.release();
        s.value.store(stored, std::memory_order_release);
        size_.fetch_add(1, std::memory_order_relaxed);
        return stored;
      }
      key = expected;
    }
    if (key == function) {
      // Another thread claimed it; its value may not be published yet.
      return s.value.load(std::memory_order_acquire);
    }
  }
  return nullptr;
}

}  // namespace numtrace::shim
