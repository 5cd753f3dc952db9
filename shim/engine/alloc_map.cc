#include "shim/engine/alloc_map.h"

#include <algorithm>

namespace numtrace::shim {

std::vector<int> AllocMap::ShardsFor(uint64_t start, uint64_t end) {
  std::vector<int> out;
  const uint64_t first = start >> kRegionShift;
  const uint64_t last = (end - 1) >> kRegionShift;
  for (uint64_t r = first; r <= last && out.size() < kShards; ++r) {
    out.push_back(ShardOf(r));
    if (r == UINT64_MAX) break;
  }
  // A range over more than 64 regions touches every shard.
  if (last - first + 1 > kShards) {
    out.clear();
    for (int i = 0; i < kShards; ++i) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Allocation> AllocMap::OverlapsLocked(uint64_t start, uint64_t end) const {
  std::vector<Allocation> out;
  for (int s : ShardsFor(start, end)) {
    const Shard& shard = shards_[s];
    std::shared_lock lock(shard.mu);
    auto it = shard.by_start.upper_bound(start);
    if (it != shard.by_start.begin()) --it;
    for (; it != shard.by_start.end() && it->first < end; ++it) {
      const Allocation& a = it->second;
      if (a.end() > start) out.push_back(a);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Allocation& a, const Allocation& b) { return a.start < b.start; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Allocation& a, const Allocation& b) { return a.start == b.start; }),
            out.end());
  return out;
}

void AllocMap::RemoveLocked(const Allocation& a) {
  for (int s : ShardsFor(a.start, a.end())) {
    std::unique_lock lock(shards_[s].mu);
    shards_[s].by_start.erase(a.start);
  }
  count_.fetch_sub(1, std::memory_order_relaxed);
}

void AllocMap::AddLocked(const Allocation& a) {
  for (int s : ShardsFor(a.start, a.end())) {
    std::unique_lock lock(shards_[s].mu);
    shards_[s].by_start[a.start] = a;
  }
  count_.fetch_add(1, std::memory_order_relaxed);
  if (a.start < lo_.load(std::memory_order_relaxed)) lo_.store(a.start, std::memory_order_relaxed);
  if (a.end() > hi_.load(std::memory_order_relaxed)) hi_.store(a.end(), std::memory_order_relaxed);
}

void AllocMap::CutLocked(uint64_t start, uint64_t end) {
  for (const Allocation& old : OverlapsLocked(start, end)) {
    RemoveLocked(old);
    if (old.start < start) AddLocked({old.start, start - old.start, old.kind});
    if (old.end() > end) AddLocked({end, old.end() - end, old.kind});
  }
}

void AllocMap::Insert(uint64_t start, uint64_t bytes, AllocKind kind) {
  if (bytes == 0 || start + bytes < start) return;
  std::lock_guard<std::mutex> w(writer_mu_);
  CutLocked(start, start + bytes);
  AddLocked({start, bytes, kind});
}

bool AllocMap::Erase(uint64_t start) {
  std::lock_guard<std::mutex> w(writer_mu_);
  std::optional<Allocation> found;
  {
    const Shard& shard = shards_[ShardOf(start >> kRegionShift)];
    std::shared_lock lock(shard.mu);
    auto it = shard.by_start.find(start);
    if (it != shard.by_start.end()) found = it->second;
  }
  if (!found) return false;
  RemoveLocked(*found);
  return true;
}

void AllocMap::EraseRange(uint64_t start, uint64_t bytes) {
  if (bytes == 0 || start + bytes < start) return;
  std::lock_guard<std::mutex> w(writer_mu_);
  CutLocked(start, start + bytes);
}

std::optional<Allocation> AllocMap::Find(uint64_t address) const {
  if (!MaybeInside(address)) return std::nullopt;
  const Shard& shard = shards_[ShardOf(address >> kRegionShift)];
  std::shared_lock lock(shard.mu);
  auto it = shard.by_start.upper_bound(address);
  if (it == shard.by_start.begin()) return std::nullopt;
  --it;
  if (address < it->second.end()) return it->second;
  return std::nullopt;
}

}  // namespace numtrace::shim
