// File: test/analyzer/read/file_contents_test.cc
//
// FileContents: a mapped file reads back byte for byte while a sequential
// reader drops the pages behind it (ReadingAt), including bytes it goes back
// to after they were dropped; the padding after the end reads as zeros; and
// load errors name the path.
#include "analyzer/read/file_contents.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

// Byte i of the test file: varies within and across pages.
// This process's resident memory (VmRSS), in bytes.
size_t ResidentBytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  size_t kb = 0;
  while (in >> key) {
    if (key == "VmRSS:") { in >> kb; break; }
  }
  return kb * 1024;
}

char ByteAt(size_t i) { return static_cast<char>('a' + (i * 7 + i / 4096) % 26); }

TEST(FileContentsTest, SequentialReadWithDroppedPagesSeesEveryByte) {
  const fs::path path = fs::temp_directory_path() / ("numtrace_file_contents_" + std::to_string(getpid()));
  const size_t size = (size_t{100} << 20) + 12345;  // several 32 MB windows and a ragged tail
  {
    std::string text(size, '\0');
    for (size_t i = 0; i < size; ++i) text[i] = ByteAt(i);
    std::ofstream(path, std::ios::binary) << text;
  }
  const size_t rss_before = ResidentBytes();
  absl::StatusOr<FileContents> f = FileContents::Load(path.string());
  ASSERT_TRUE(f.ok()) << f.status();
  fs::remove(path);  // the mapping keeps the data
  std::string_view v = f->view();
  ASSERT_EQ(v.size(), size);
  size_t wrong = 0;
  for (size_t pos = 0; pos < size; pos += 4093) {
    f->ReadingAt(pos);
    for (size_t i = pos; i < std::min(size, pos + 4093); ++i) wrong += v[i] != ByteAt(i);
  }
  EXPECT_EQ(wrong, 0u);
  // About two 32 MB windows stay mapped in, never the whole 100 MB.
  EXPECT_LT(ResidentBytes(), rss_before + (size_t{80} << 20));
  // Going back to dropped pages faults them in again.
  f->ReadingAt(size);
  for (size_t i : {size_t{0}, size_t{1} << 20, size / 2, size - 1}) EXPECT_EQ(v[i], ByteAt(i)) << i;
  for (size_t i = 0; i < simdjson::SIMDJSON_PADDING; ++i) EXPECT_EQ(v.data()[size + i], '\0');
}

TEST(FileContentsTest, CopiesIgnoreReadingAt) {
  FileContents f = FileContents::Copy("{\"type\":\"header\"}\n");
  f.ReadingAt(1 << 30);
  EXPECT_EQ(f.view(), "{\"type\":\"header\"}\n");
}

TEST(FileContentsTest, ErrorsNameThePath) {
  absl::StatusOr<FileContents> f = FileContents::Load("/nonexistent/numtrace/x.jsonl");
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::IsNotFound(f.status()));
  EXPECT_NE(f.status().message().find("/nonexistent/numtrace/x.jsonl"), std::string_view::npos);
  f = FileContents::Load(fs::temp_directory_path().string());
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("directory"), std::string_view::npos);
}

}  // namespace
}  // namespace numtrace::analyzer
