// File: test/shim/engine/capture_counters_test.cc
//
// The footer counters: one list gives unique snake_case names in a fixed
// order, every counter is in the snapshot, and each is documented in
// docs/format.md (the footer section) - a counter nobody can look up is
// not an honest footer.
#include "shim/engine/capture_counters.h"
#include "test/util/test_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace numtrace::shim {
namespace {

TEST(CaptureCounters, NamesAreUniqueSnakeCaseAndInSnapshotOrder) {
  CaptureCounters::Get().Reset();
  CaptureCounters::Get().Add(Counter::kLaunchesSeen, 5);
  CaptureCounters::Get().Set(Counter::kActivityUnavailable, 1);
  auto snap = CaptureCounters::Get().Snapshot();
  ASSERT_EQ(snap.size(), static_cast<size_t>(Counter::kCount));
  std::set<std::string> names;
  for (size_t i = 0; i < snap.size(); ++i) {
    const std::string& name = snap[i].first;
    EXPECT_EQ(name, CounterName(static_cast<Counter>(i)));
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    for (char c : name) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << name;
  }
  EXPECT_EQ(snap[0], (std::pair<std::string, uint64_t>{"launches_seen", 5}));
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 1u);
  CaptureCounters::Get().Reset();
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kLaunchesSeen), 0u);
}

TEST(CaptureCounters, EveryCounterIsDocumentedInFormatMd) {
  std::ifstream in(std::string(NUMTRACE_SOURCE_DIR) + "/docs/format.md");
  ASSERT_TRUE(in) << "docs/format.md";
  std::stringstream text;
  text << in.rdbuf();
  for (size_t i = 0; i < static_cast<size_t>(Counter::kCount); ++i) {
    std::string name = CounterName(static_cast<Counter>(i));
    EXPECT_NE(text.str().find("`" + name + "`"), std::string::npos)
        << name << " is not documented in docs/format.md";
  }
}

}  // namespace
}  // namespace numtrace::shim
