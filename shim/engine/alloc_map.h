// File: shim/engine/alloc_map.h
//
// The live device allocations of the process, as non-overlapping intervals,
// so the buffer scan can ask "which allocation does this 8-byte value point
// into?" in O(log n).
//
// Concurrency: the address space is cut into 1 GiB regions, hashed onto
// kShards shards; each shard is an ordered map under its own reader-writer
// lock, and an allocation is entered in every region it covers (almost
// always one). A lookup takes the shared lock of ONE shard, so launches on
// different threads never meet on a process-wide lock, and the lookup is
// only made for captured launches anyway. Updates (alloc/free, not on the
// launch path) are serialised by writer_mu_ and then lock only the shards
// they touch, always in ascending shard order, so they cannot deadlock.
// Correctness of a lookup in a shard that mixes regions: intervals never
// overlap, so the entry with the greatest start <= p is the only candidate.
//
// Example:
//   AllocMap m;
//   m.Insert(0x7000'0000'0000, 4096, AllocKind::kPlain);
//   m.Find(0x7000'0000'0010)->start;  // 0x7000'0000'0000
//   m.Erase(0x7000'0000'0000);        // true
#ifndef NUMTRACE_SHIM_ENGINE_ALLOC_MAP_H_
#define NUMTRACE_SHIM_ENGINE_ALLOC_MAP_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "shim/engine/events.h"

namespace numtrace::shim {

struct Allocation {
  uint64_t start = 0;
  uint64_t bytes = 0;
  AllocKind kind = AllocKind::kPlain;
  int device = -1;  // the driver's device ordinal of the range (-1: not asked)
  uint64_t end() const { return start + bytes; }
};

class AllocMap {
 public:
  AllocMap() = default;
  AllocMap(const AllocMap&) = delete;
  AllocMap& operator=(const AllocMap&) = delete;

  // Adds [start, start+bytes). Whatever it overlaps is cut away first: a
  // missed free must not leave a stale entry shadowing new memory.
  void Insert(uint64_t start, uint64_t bytes, AllocKind kind);
  // Removes the allocation that starts exactly at `start` (cuMemFree,
  // cuMemFreeAsync). False when there is none.
  bool Erase(uint64_t start);
  // Removes every byte of [start, start+bytes) (cuMemUnmap): pieces partly
  // inside are trimmed.
  void EraseRange(uint64_t start, uint64_t bytes);

  // The live allocation containing `address`, if any. Thread-safe.
  std::optional<Allocation> Find(uint64_t address) const;
  // Cheap pre-filter: false means `v` cannot be inside any allocation ever seen.
  bool MaybeInside(uint64_t v) const {
    return v >= lo_.load(std::memory_order_relaxed) && v < hi_.load(std::memory_order_relaxed);
  }
  size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kShards = 64;
  static constexpr int kRegionShift = 30;  // 1 GiB regions
  struct Shard {
    mutable std::shared_mutex mu;
    std::map<uint64_t, Allocation> by_start;
  };
  static int ShardOf(uint64_t region) {
    return static_cast<int>((region * 0x9E3779B97F4A7C15ull) >> 58);  // top 6 bits
  }
  // Shards covering [start, end), ascending, without repeats.
  static std::vector<int> ShardsFor(uint64_t start, uint64_t end);
  // These need writer_mu_ held.
  std::vector<Allocation> OverlapsLocked(uint64_t start, uint64_t end) const;
  void RemoveLocked(const Allocation& a);
  void AddLocked(const Allocation& a);
  // Removes [start, end) from every allocation it overlaps; the pieces
  // outside it stay, as allocations of their own.
  void CutLocked(uint64_t start, uint64_t end);

  std::mutex writer_mu_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> lo_{UINT64_MAX}, hi_{0};
  std::atomic<size_t> count_{0};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_ALLOC_MAP_H_
