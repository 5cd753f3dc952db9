// File: test/shim/engine/capture_counters_test.cc
//
// The footer counters: the one list (common/format/capture_counter_list.h)
// gives unique snake_case names; the shim's snapshot, the footer the writer
// makes of it and docs/format.md's table (name, severity, description, in
// list order) all agree with that list - a counter nobody can look up is not
// an honest footer.
#include "shim/engine/capture_counters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/format/jsonl_writer.h"
#include "common/format/records.h"
#include "test/util/test_paths.h"

namespace numtrace::shim {
namespace {

constexpr size_t kCounters = static_cast<size_t>(Counter::kCount);

TEST(CaptureCounters, NamesAreUniqueSnakeCaseAndInSnapshotOrder) {
  CaptureCounters::Get().Reset();
  CaptureCounters::Get().Add(Counter::kLaunchesSeen, 5);
  CaptureCounters::Get().Set(Counter::kActivityUnavailable, 1);
  auto snap = CaptureCounters::Get().Snapshot();
  ASSERT_EQ(snap.size(), kCounters);
  std::set<std::string> names;
  for (size_t i = 0; i < snap.size(); ++i) {
    const std::string& name = snap[i].first;
    EXPECT_EQ(name, CaptureCounterName(static_cast<Counter>(i)));
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    for (char c : name) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << name;
  }
  EXPECT_EQ(snap[0], (std::pair<std::string, uint64_t>{"launches_seen", 5}));
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kActivityUnavailable), 1u);
  CaptureCounters::Get().Reset();
  EXPECT_EQ(CaptureCounters::Get().value(Counter::kLaunchesSeen), 0u);
}

// The footer line the writer makes of a snapshot holds every counter of the
// list, in list order, and reads back by enumerator.
TEST(CaptureCounters, FooterWriterWritesTheListInOrder) {
  CaptureCounters::Get().Reset();
  CaptureCounters::Get().Add(Counter::kRingFull, 3);
  FooterRecord f;
  f.counters = CaptureCounters::Get().Snapshot();
  CaptureCounters::Get().Reset();
  std::string line;
  AppendJsonLine(f, &line);
  std::string expected = "\"counters\":{";
  for (size_t i = 0; i < kCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    expected += (i ? ",\"" : "\"") + std::string(CaptureCounterName(c)) + "\":" + (c == Counter::kRingFull ? "3" : "0");
  }
  expected += "}";
  EXPECT_NE(line.find(expected), std::string::npos) << line;
  EXPECT_EQ(f.CounterValue(Counter::kRingFull), 3u);
  EXPECT_EQ(f.CounterValue(Counter::kLaunchesSeen), 0u);
  f.counters.pop_back();  // a writer older than the last counter
  EXPECT_EQ(f.CounterValue(static_cast<Counter>(kCounters - 1)), std::nullopt);
}

// docs/format.md's table, "| `name` | severity | description |", row for row
// the list: no counter missing, none extra, none out of order, and the same
// severity and description.
TEST(CaptureCounters, FormatMdTableIsTheList) {
  std::ifstream in(std::string(NUMTRACE_SOURCE_DIR) + "/docs/format.md");
  ASSERT_TRUE(in) << "docs/format.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t from = doc.find("| counter | severity | counts |");
  ASSERT_NE(from, std::string::npos) << "no footer counter table in docs/format.md";
  std::istringstream lines(doc.substr(from));
  std::string line;
  std::getline(lines, line);  // heading
  std::getline(lines, line);  // |---|
  const std::regex row(R"(\| `([a-z_]+)` \| ([a-z_]+) \| (.*) \|)");
  std::vector<std::string> rows;
  while (std::getline(lines, line) && line.rfind("|", 0) == 0) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, row)) << "not a counter row: " << line;
    rows.push_back(m[1].str() + " | " + m[2].str() + " | " + m[3].str());
  }
  std::vector<std::string> listed;
  for (size_t i = 0; i < kCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    listed.push_back(std::string(CaptureCounterName(c)) + " | " +
                     std::string(kCounterSeverityNames[static_cast<size_t>(CaptureCounterSeverity(c))]) + " | " +
                     std::string(CaptureCounterDescription(c)));
  }
  for (size_t i = 0; i < std::min(rows.size(), listed.size()); ++i) {
    EXPECT_EQ(rows[i], listed[i]) << "row " << i << " of docs/format.md's counter table";
  }
  EXPECT_EQ(rows.size(), listed.size()) << "rows in docs/format.md's counter table";
}

// test/gpu/check_trace.py (python, on the GPU machine) fails the footer row
// on the counters of severity error; its copy of their names is the list's.
TEST(CaptureCounters, CheckTracePyKnowsTheErrorCounters) {
  std::ifstream in(std::string(NUMTRACE_SOURCE_DIR) + "/test/gpu/check_trace.py");
  ASSERT_TRUE(in) << "test/gpu/check_trace.py";
  std::string line, copy;
  while (std::getline(in, line)) {
    if (line.rfind("ERROR_COUNTERS = ", 0) == 0) copy = line;
  }
  std::string expected = "ERROR_COUNTERS = (";
  for (size_t i = 0; i < kCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    if (CaptureCounterSeverity(c) == CounterSeverity::kError) expected += "\"" + std::string(CaptureCounterName(c)) + "\",";
  }
  EXPECT_EQ(copy, expected + ")");
}

}  // namespace
}  // namespace numtrace::shim
