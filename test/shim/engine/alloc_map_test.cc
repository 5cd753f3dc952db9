#include "shim/engine/alloc_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace numtrace::shim {
namespace {

constexpr uint64_t kBase = 0x7f00'0000'0000ull;
constexpr uint64_t kGiB = 1ull << 30;

TEST(AllocMapTest, FindsContainingAllocationOnly) {
  AllocMap m;
  m.Insert(kBase, 4096, AllocKind::kPlain);
  m.Insert(kBase + 8192, 100, AllocKind::kStreamOrdered);
  EXPECT_EQ(m.Find(kBase)->start, kBase);
  EXPECT_EQ(m.Find(kBase + 4095)->bytes, 4096u);
  EXPECT_FALSE(m.Find(kBase + 4096));  // one past the end
  EXPECT_FALSE(m.Find(kBase - 1));
  EXPECT_EQ(m.Find(kBase + 8192 + 99)->kind, AllocKind::kStreamOrdered);
  EXPECT_FALSE(m.Find(kBase + 8192 + 100));
  EXPECT_FALSE(m.Find(0));
  EXPECT_EQ(m.size(), 2u);
}

TEST(AllocMapTest, FreeByStart) {
  AllocMap m;
  m.Insert(kBase, 4096, AllocKind::kPlain);
  EXPECT_FALSE(m.Erase(kBase + 16));  // not a start
  EXPECT_TRUE(m.Erase(kBase));
  EXPECT_FALSE(m.Find(kBase + 16));
  EXPECT_FALSE(m.Erase(kBase));
  EXPECT_EQ(m.size(), 0u);
}

TEST(AllocMapTest, OverlappingInsertReplacesStaleEntries) {
  AllocMap m;
  m.Insert(kBase, 1000, AllocKind::kPlain);
  m.Insert(kBase + 2000, 1000, AllocKind::kPlain);
  // A missed free: new memory over the tail of the first and head of the second.
  m.Insert(kBase + 500, 2000, AllocKind::kStreamOrdered);
  EXPECT_EQ(m.Find(kBase + 100)->bytes, 500u);           // trimmed first
  EXPECT_EQ(m.Find(kBase + 600)->start, kBase + 500);    // new
  EXPECT_EQ(m.Find(kBase + 2400)->start, kBase + 500);
  EXPECT_EQ(m.Find(kBase + 2600)->start, kBase + 2500);  // trimmed second
  EXPECT_EQ(m.Find(kBase + 2600)->bytes, 500u);
  EXPECT_EQ(m.size(), 3u);
}

TEST(AllocMapTest, VmmUnmapTrimsAndSplits) {
  AllocMap m;
  m.Insert(kBase, 8 << 20, AllocKind::kVirtualMap);  // one 8 MiB mapping
  m.EraseRange(kBase + (2 << 20), 2 << 20);          // unmap the middle 2 MiB
  EXPECT_EQ(m.Find(kBase)->bytes, 2u << 20);
  EXPECT_FALSE(m.Find(kBase + (3 << 20)));
  EXPECT_EQ(m.Find(kBase + (5 << 20))->start, kBase + (4 << 20));
  EXPECT_EQ(m.Find(kBase + (5 << 20))->bytes, 4u << 20);
  m.EraseRange(kBase, 8 << 20);
  EXPECT_EQ(m.size(), 0u);
  EXPECT_FALSE(m.Find(kBase + (5 << 20)));
}

TEST(AllocMapTest, AllocationSpanningManyRegions) {
  AllocMap m;
  m.Insert(kBase + kGiB / 2, 3 * kGiB, AllocKind::kPlain);
  for (uint64_t off : {kGiB / 2, kGiB, 2 * kGiB, 3 * kGiB + kGiB / 2 - 1}) {
    auto a = m.Find(kBase + off);
    ASSERT_TRUE(a) << off;
    EXPECT_EQ(a->start, kBase + kGiB / 2);
  }
  EXPECT_FALSE(m.Find(kBase + 3 * kGiB + kGiB / 2));
  EXPECT_TRUE(m.Erase(kBase + kGiB / 2));
  EXPECT_FALSE(m.Find(kBase + 2 * kGiB));
  // A huge reservation-sized mapping touches every shard and still works.
  m.Insert(kBase, 200 * kGiB, AllocKind::kVirtualMap);
  EXPECT_EQ(m.Find(kBase + 150 * kGiB)->start, kBase);
  m.EraseRange(kBase + 100 * kGiB, kGiB);
  EXPECT_FALSE(m.Find(kBase + 100 * kGiB + 5));
  EXPECT_EQ(m.Find(kBase + 150 * kGiB)->start, kBase + 101 * kGiB);
}

TEST(AllocMapTest, ConcurrentLookupsDuringAllocAndFree) {
  AllocMap m;
  // Stable allocations the readers must always find.
  for (int i = 0; i < 64; ++i) m.Insert(kBase + i * kGiB, 1 << 20, AllocKind::kPlain);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> misses{0}, lookups{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      uint64_t i = r;
      while (!stop.load()) {
        const uint64_t p = kBase + (i % 64) * kGiB + (i * 4096) % (1 << 20);
        auto a = m.Find(p);
        if (!a || a->start != kBase + (i % 64) * kGiB) misses.fetch_add(1);
        lookups.fetch_add(1);
        ++i;
      }
    });
  }
  // Churn only once every reader runs: on a loaded machine the churn could
  // otherwise finish before any lookup, and the test would prove nothing.
  while (lookups.load() < 3 * 64) std::this_thread::yield();
  // Churn: short-lived allocations between the stable ones.
  for (int round = 0; round < 2000; ++round) {
    const uint64_t at = kBase + (round % 64) * kGiB + (2 << 20);
    m.Insert(at, 4096, AllocKind::kStreamOrdered);
    EXPECT_TRUE(m.Erase(at));
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0u);
  EXPECT_GT(lookups.load(), 0u);
  EXPECT_EQ(m.size(), 64u);
}

}  // namespace
}  // namespace numtrace::shim
