// File: test/shim/device/host_device_test.cc
#include "shim/device/host_device.h"

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "shim/reduce/host_reduce.h"

namespace numtrace::shim {
namespace {

MeasureItem Item(const std::vector<float>& v) {
  return {reinterpret_cast<uint64_t>(v.data()), v.size() * sizeof(float), DType::kF32};
}

std::map<uint64_t, std::vector<BufferStats>> PollAll(HostDevice& dev) {
  std::map<uint64_t, std::vector<BufferStats>> out;
  dev.Poll([&](uint64_t ticket, std::span<const BufferStats> s, bool) {
    out[ticket].assign(s.begin(), s.end());
  });
  return out;
}

TEST(HostDevice, MeasuresEachItemAtEnqueueTime) {
  HostDevice dev;
  std::vector<float> a = {1, 2, 3, 4}, b = {-1, 0.5f};
  const MeasureItem items[2] = {Item(a), Item(b)};
  ASSERT_TRUE(dev.Enqueue(0, items, 7));
  a[0] = 100;  // after the "launch": must not show in ticket 7
  auto got = PollAll(dev);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[7].size(), 2u);
  EXPECT_EQ(got[7][0].sum, 10.0);
  EXPECT_EQ(got[7][1].min, -1.0);
  EXPECT_EQ(got[7][1].hash, ReduceHost(b.data(), 8, DType::kF32).hash);
  EXPECT_TRUE(PollAll(dev).empty());  // handed out once
  EXPECT_EQ(dev.enqueued(), 1u);
}

TEST(HostDevice, FailNextEnqueues) {
  HostDevice dev;
  std::vector<float> a = {1};
  const MeasureItem item = Item(a);
  dev.FailNextEnqueues(2);
  EXPECT_FALSE(dev.Enqueue(0, {&item, 1}, 1));
  EXPECT_FALSE(dev.Enqueue(0, {&item, 1}, 2));
  EXPECT_TRUE(dev.Enqueue(0, {&item, 1}, 3));
  EXPECT_EQ(dev.rejected(), 2u);
  auto got = PollAll(dev);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_TRUE(got.count(3));
}

TEST(HostDevice, CapacityActsLikeAFullRing) {
  HostDevice dev;
  dev.SetCapacity(2);
  std::vector<float> a = {1};
  const MeasureItem item = Item(a);
  EXPECT_TRUE(dev.Enqueue(0, {&item, 1}, 1));
  EXPECT_TRUE(dev.Enqueue(0, {&item, 1}, 2));
  EXPECT_FALSE(dev.Enqueue(0, {&item, 1}, 3));
  EXPECT_EQ(PollAll(dev).size(), 2u);  // polling frees the ring
  EXPECT_TRUE(dev.Enqueue(0, {&item, 1}, 4));
}

TEST(HostDevice, HeldResultsAppearAfterDrain) {
  HostDevice dev;
  dev.SetHoldResults(true);
  std::vector<float> a = {1};
  const MeasureItem item = Item(a);
  ASSERT_TRUE(dev.Enqueue(0, {&item, 1}, 1));
  EXPECT_TRUE(PollAll(dev).empty());
  dev.Drain();
  EXPECT_EQ(PollAll(dev).size(), 1u);
}

TEST(HostDevice, EmptyItemListStillReportsTicket) {
  HostDevice dev;
  ASSERT_TRUE(dev.Enqueue(0, {}, 9));
  auto got = PollAll(dev);
  ASSERT_TRUE(got.count(9));
  EXPECT_TRUE(got[9].empty());
}

TEST(HostDevice, ConcurrentEnqueueAndPoll) {
  HostDevice dev;
  std::vector<float> a(10000, 0.25f);
  const MeasureItem item = Item(a);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> seen{0};
  std::thread poller([&] {
    while (!done.load()) {
      dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) {
        if (s.size() == 1 && s[0].sum == 2500.0) seen.fetch_add(1);
      });
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) ASSERT_TRUE(dev.Enqueue(t, {&item, 1}, t * 100 + i));
    });
  }
  for (auto& p : producers) p.join();
  dev.Drain();
  done.store(true);
  poller.join();
  dev.Poll([&](uint64_t, std::span<const BufferStats> s, bool) {
    if (s.size() == 1 && s[0].sum == 2500.0) seen.fetch_add(1);
  });
  EXPECT_EQ(seen.load(), 200u);
}

}  // namespace
}  // namespace numtrace::shim
