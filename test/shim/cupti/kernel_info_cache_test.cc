// File: test/shim/cupti/kernel_info_cache_test.cc
//
// The lock-free per-function cache: hits, misses, races, a full table.
#include "shim/cupti/kernel_info_cache.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace numtrace::shim {
namespace {

std::unique_ptr<KernelDescription> Info(const std::string& name) {
  auto k = std::make_unique<KernelDescription>();
  k->name = name;
  return k;
}

TEST(KernelInfoCache, InsertThenFind) {
  KernelInfoCache cache;
  EXPECT_EQ(cache.Find(0x1000), nullptr);
  const KernelDescription* k = cache.Insert(0x1000, Info("a"));
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(cache.Find(0x1000), k);
  EXPECT_EQ(cache.Find(0x1000)->name, "a");
  EXPECT_EQ(cache.Find(0x2000), nullptr);
  EXPECT_EQ(cache.Insert(0, Info("zero")), nullptr) << "0 is the empty key";
}

TEST(KernelInfoCache, SecondInsertKeepsFirstEntry) {
  KernelInfoCache cache;
  const KernelDescription* first = cache.Insert(0x1000, Info("first"));
  const KernelDescription* second = cache.Insert(0x1000, Info("second"));
  EXPECT_EQ(first, second);
  EXPECT_EQ(cache.Find(0x1000)->name, "first");
  EXPECT_EQ(cache.size(), 1u);
}

TEST(KernelInfoCache, ManyThreadsAgreeOnOneEntryPerHandle) {
  KernelInfoCache cache;
  constexpr int kThreads = 4, kHandles = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 1; i <= kHandles; ++i) {
        uint64_t h = 0x7f0000000000ull + 0x100ull * i;
        if (cache.Find(h) == nullptr) cache.Insert(h, Info("k" + std::to_string(i) + "_t" + std::to_string(t)));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(cache.size(), static_cast<size_t>(kHandles));
  for (int i = 1; i <= kHandles; ++i) {
    const KernelDescription* k = cache.Find(0x7f0000000000ull + 0x100ull * i);
    ASSERT_NE(k, nullptr) << i;
    EXPECT_EQ(k->name.rfind("k" + std::to_string(i) + "_t", 0), 0u);
  }
}

TEST(KernelInfoCache, FullTableOverflowsAndLosesNothing) {
  KernelInfoCache cache;
  constexpr uint64_t kCount = HandleTable<KernelDescription>::kSlots + 100;
  for (uint64_t i = 1; i <= kCount; ++i) ASSERT_NE(cache.Insert(i * 64, Info("x")), nullptr) << i;
  EXPECT_EQ(cache.size(), kCount);
  for (uint64_t i = 1; i <= kCount; ++i) ASSERT_NE(cache.Find(i * 64), nullptr) << i;
}

TEST(KernelInfoCache, AReusedHandleIsReplacedAndTheOldEntryStaysReadable) {
  KernelInfoCache cache;
  const KernelDescription* old = cache.Insert(0x1000, Info("old_kernel"));
  const KernelDescription* fresh = cache.Replace(0x1000, Info("new_kernel"));
  EXPECT_NE(old, fresh);
  EXPECT_EQ(cache.Find(0x1000)->name, "new_kernel");
  EXPECT_EQ(old->name, "old_kernel") << "a reader holding the old entry stays safe";
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace numtrace::shim
