// LineReader: every line back byte for byte across buffer refills, in
// bounded memory; gzip read through zlib; what it refuses (long lines, NUL
// bytes, symlink loops) in one line with its own words.
#include "analyzer/read/line_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test/util/scratch_dir.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using numtrace::testing::FreshTestDir;
using numtrace::testing::WriteFileText;

std::vector<std::string> AllLines(LineReader& r, std::string* error = nullptr, bool* last_terminated = nullptr) {
  std::vector<std::string> lines;
  LineReader::Line line;
  while (true) {
    absl::StatusOr<bool> more = r.Next(&line);
    if (!more.ok()) {
      if (error) *error = std::string(more.status().message());
      break;
    }
    if (!*more) break;
    EXPECT_GE(line.readable, line.text.size() + 64);
    lines.emplace_back(line.text);
    if (last_terminated) *last_terminated = line.terminated;
  }
  return lines;
}

std::string Gzip(std::string_view text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Lines of varying length, crossing many 4 MiB buffer refills.
std::string ManyLines(size_t count, std::vector<std::string>* lines) {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    std::string l = "line " + std::to_string(i) + " " + std::string(i * 7919 % 3000, 'a' + i % 26);
    text += l + "\n";
    lines->push_back(std::move(l));
  }
  return text;
}

TEST(LineReaderTest, FileLinesComeBackExactlyAcrossRefills) {
  fs::path dir = FreshTestDir("lines");
  std::vector<std::string> want;
  WriteFileText(dir / "t.jsonl", ManyLines(20000, &want) + "tail without newline");
  want.push_back("tail without newline");
  auto r = LineReader::Open((dir / "t.jsonl").string());
  ASSERT_TRUE(r.ok()) << r.status();
  bool terminated = true;
  EXPECT_EQ(AllLines(**r, nullptr, &terminated), want);
  EXPECT_FALSE(terminated);
  EXPECT_FALSE((*r)->gzip());
  fs::remove_all(dir);
}

// A small starting buffer (one reader per rank, --across-ranks): the same
// lines, a line longer than the buffer grows it.
TEST(LineReaderTest, ASmallStartingBufferGivesTheSameLines) {
  fs::path dir = FreshTestDir("lines");
  std::vector<std::string> want;
  WriteFileText(dir / "t.jsonl", ManyLines(3000, &want) + std::string(20000, 'z') + "\n");
  want.push_back(std::string(20000, 'z'));
  auto r = LineReader::Open((dir / "t.jsonl").string(), 4096);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllLines(**r, nullptr, nullptr), want);
  fs::remove_all(dir);
}

TEST(LineReaderTest, GzipIsReadThroughZlibAlsoConcatenatedMembers) {
  fs::path dir = FreshTestDir("lines");
  std::vector<std::string> want;
  const std::string text = ManyLines(5000, &want);
  WriteFileText(dir / "t.jsonl.gz", Gzip(text.substr(0, 1000)) + Gzip(text.substr(1000)));
  auto r = LineReader::Open((dir / "t.jsonl.gz").string());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(AllLines(**r), want);
  EXPECT_TRUE((*r)->gzip());
  EXPECT_FALSE((*r)->gzip_cut_short());
  // Cut short: the lines before the cut, the last one unterminated.
  std::string gz = Gzip(text);
  auto cut = LineReader::FromBytes(gz.substr(0, gz.size() / 2), "cut.gz");
  std::string error;
  std::vector<std::string> got = AllLines(*cut, &error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_TRUE(cut->gzip_cut_short());
  ASSERT_GT(got.size(), 100u);
  for (size_t i = 0; i + 1 < got.size(); ++i) ASSERT_EQ(got[i], want[i]);
  // Corrupt: one line naming the file.
  std::string bad = gz;
  for (size_t i = 20; i < 200; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  auto corrupt = LineReader::FromBytes(bad, "bad.gz");
  AllLines(*corrupt, &error);
  EXPECT_NE(error.find("bad.gz: corrupt gzip data"), std::string::npos) << error;
  fs::remove_all(dir);
}

TEST(LineReaderTest, ALineLongerThanTheCapIsRefusedEarly) {
  std::string huge(LineReader::kMaxLineBytes + 10, 'x');
  auto r = LineReader::FromBytes("{\"a\":1}\n" + huge + "\n", "huge.jsonl");
  std::string error;
  std::vector<std::string> got = AllLines(*r, &error);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_NE(error.find("huge.jsonl:2: a line longer than 16 MiB"), std::string::npos) << error;
}

TEST(LineReaderTest, BinaryDataIsRefusedWithItsOffset) {
  auto r = LineReader::FromBytes(std::string("{\"a\":1}\n\x7f" "ELF\0\0\1", 14), "bin");
  std::string error;
  AllLines(*r, &error);
  EXPECT_NE(error.find("bin: binary data (a NUL byte at byte 12)"), std::string::npos) << error;
  // /dev/zero is refused after one buffer, not after gigabytes.
  auto zero = LineReader::Open("/dev/zero");
  ASSERT_TRUE(zero.ok());
  AllLines(**zero, &error);
  EXPECT_NE(error.find("/dev/zero: binary data (a NUL byte at byte 0)"), std::string::npos) << error;
}

TEST(LineReaderTest, ByteOrderMarkIsSkippedAndPeekDoesNotConsume) {
  auto r = LineReader::FromBytes("\xEF\xBB\xBF{\"type\":1}\nx\n", "bom");
  absl::StatusOr<std::string_view> head = r->Peek();
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(head->starts_with("{\"type\""));
  EXPECT_EQ(AllLines(*r), (std::vector<std::string>{"{\"type\":1}", "x"}));
}

TEST(LineReaderTest, OpenErrorsHaveTheirOwnWords) {
  fs::path dir = FreshTestDir("lines");
  fs::create_symlink(dir / "loop1", dir / "loop2");
  fs::create_symlink(dir / "loop2", dir / "loop1");
  auto loop = LineReader::Open((dir / "loop1").string());
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("a symlink loop"), absl::string_view::npos) << loop.status();
  auto missing = LineReader::Open((dir / "nope").string());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  auto directory = LineReader::Open(dir.string());
  EXPECT_NE(directory.status().message().find("is a directory"), absl::string_view::npos);
  fs::remove_all(dir);
}

TEST(LineReaderTest, OutOfMemoryNamesTheFileAndHowFarItWasRead) {
  auto r = LineReader::FromBytes("a\nb\n", "t.jsonl");
  AllLines(*r);
  absl::Status s = r->OutOfMemoryError();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("t.jsonl: out of memory after reading 2 lines"), absl::string_view::npos) << s;
}

}  // namespace
}  // namespace numtrace::analyzer
