// Whole-file reads that cannot be made to hang or grow (issue 15): fifos,
// devices and links to them are refused at once, a file over the cap before
// it is read, through ReadBoundedFile and every reader built on it (the
// --override file, the dump sidecar, a .npy array).
#include "common/io/bounded_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "analyzer/align/override_file.h"
#include "analyzer/tensors/dump_reader.h"
#include "analyzer/tensors/npy_reader.h"
#include "test/util/scratch_dir.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = numtrace::testing::FreshTestDir("bounded").string();
    ASSERT_EQ(::mkfifo(P("fifo").c_str(), 0644), 0);
    fs::create_symlink("/dev/zero", P("zero-link"));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& name) const { return dir_ + "/" + name; }
  static std::string Message(const absl::Status& s) { return std::string(s.message()); }
  std::string dir_;
};

TEST_F(BoundedFileTest, ReadsARegularFile) {
  numtrace::testing::WriteFileText(P("a.txt"), "hello");
  absl::StatusOr<std::string> s = ReadBoundedFile(P("a.txt"), "the test file", 5);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, "hello");
}

// Each of these would block (a fifo without a writer) or never end
// (/dev/zero); the test finishing at all is half the check.
TEST_F(BoundedFileTest, FifosDevicesLinksAndDirectoriesAreRefusedAtOnce) {
  const std::pair<std::string, std::string> cases[] = {
      {P("fifo"), "is a fifo, not a regular file"},
      {"/dev/zero", "is a character device, not a regular file"},
      {P("zero-link"), "is a character device, not a regular file"},
      {dir_, "is a directory, not a regular file"},
  };
  for (const auto& [path, words] : cases) {
    absl::StatusOr<std::string> s = ReadBoundedFile(path, "the test file", 1 << 20);
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(Message(s.status()), path + ": the test file " + words +
                                       " (refused: it could be read without end)");
  }
  absl::StatusOr<std::string> missing = ReadBoundedFile(P("nope"), "the test file", 1);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(missing.status()), P("nope") + ": the test file: no such file");
}

TEST_F(BoundedFileTest, AFileOverTheCapIsRefusedBeforeItIsRead) {
  // Sparse: 3 GiB on paper, nothing on disk.
  int fd = ::open(P("big").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{3} << 30), 0);
  ::close(fd);
  absl::StatusOr<std::string> s = ReadBoundedFile(P("big"), "the test file", uint64_t{16} << 20);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Message(s.status()),
            P("big") + ": the test file is 3.0 GiB, more than the 16.0 MiB such a file may have (refused)");
}

TEST_F(BoundedFileTest, OverrideFileSidecarAndNpyReadersUseIt) {
  absl::StatusOr<Overrides> o = ReadOverrideFile("/dev/zero");
  ASSERT_FALSE(o.ok());
  EXPECT_NE(Message(o.status()).find("/dev/zero: the override file is a character device"), std::string::npos)
      << o.status();
  EXPECT_FALSE(ReadOverrideFile(P("fifo")).ok());

  // An .npy that is a fifo or a link to /dev/zero (numtrace-diff --tensors).
  ASSERT_EQ(::mkfifo(P("dump_0_1.arg1.after.npy").c_str(), 0644), 0);
  absl::StatusOr<DumpSide> fifo = ReadDumpSide(P("dump_0_1.arg1.after.npy"), std::nullopt);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(Message(fifo.status()).find("the .npy array is a fifo"), std::string::npos) << fifo.status();
  fs::create_symlink("/dev/zero", P("z.npy"));
  absl::StatusOr<NpyArray> zero = ReadNpy(P("z.npy"));
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(Message(zero.status()).find("the .npy array is a character device"), std::string::npos);

  // A sidecar that is a fifo, and one whose .npy links to /dev/zero.
  ASSERT_EQ(::mkfifo(P("dump_0_2.json").c_str(), 0644), 0);
  absl::StatusOr<DumpSide> side = ReadDumpSide(P("dump_0_2.json"), std::nullopt);
  ASSERT_FALSE(side.ok());
  EXPECT_NE(Message(side.status()).find("the dump sidecar is a fifo"), std::string::npos) << side.status();
  numtrace::testing::WriteFileText(
      P("dump_0_3.json"),
      R"({"format":"numtrace-dump","version":1,"seq":3,"step":0,"name":"k","rank":0,"buffers":[)"
      R"({"arg":1,"role":"out","dtype":"f32","bytes":4,"n":1,"hash":"0000000000000000","after":"z.npy"}]})");
  absl::StatusOr<DumpSide> linked = ReadDumpSide(P("dump_0_3.json"), std::nullopt);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(Message(linked.status()).find("z.npy: the .npy array is a character device"), std::string::npos)
      << linked.status();
}

// Under a 1 GiB address-space limit a 2 GiB (sparse) file is read: the
// error is ResourceExhausted naming the file and what it was read for, in
// a child process so the limit binds nothing else.
TEST_F(BoundedFileTest, OutOfMemoryNamesTheFileAndTheStage) {
  int fd = ::open(P("big.npy").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{2} << 30), 0);
  ::close(fd);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit rl {size_t{1} << 30, size_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &rl);
    absl::StatusOr<std::string> s = ReadBoundedFile(P("big.npy"), "the test file", uint64_t{4} << 30);
    if (s.ok() || s.status().code() != absl::StatusCode::kResourceExhausted) _exit(1);
    if (Message(s.status()) != P("big.npy") + ": out of memory reading the test file (2.0 GiB); it needs more "
                                              "memory than this process may use") _exit(2);
    absl::StatusOr<NpyArray> npy = ReadNpy(P("big.npy"));
    if (npy.ok() || Message(npy.status()).find("out of memory reading the .npy array") == std::string::npos) _exit(3);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Each caller's cap binds one byte past it, before anything is read (sparse
// files: the sizes cost no disk). Only the summary's cap was exercised before.
TEST_F(BoundedFileTest, EachCallersCapRefusesOneBytePast) {
  auto sparse = [&](const std::string& name, uint64_t bytes) {
    int fd = ::open(P(name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(bytes)), 0);
    ::close(fd);
    return P(name);
  };
  absl::StatusOr<Overrides> over = ReadOverrideFile(sparse("o.txt", kMaxOverrideFileBytes + 1));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(Message(over.status()).find("is 16.0 MiB, more than the 16.0 MiB"), std::string::npos) << over.status();
  absl::StatusOr<NpyArray> npy = ReadNpy(sparse("huge.npy", kMaxNpyBytes + 1));
  ASSERT_FALSE(npy.ok());
  EXPECT_NE(Message(npy.status()).find("more than the 16.0 GiB"), std::string::npos) << npy.status();
  // The dump sidecar's cap (64 MiB) is file-local to the dump reader.
  absl::StatusOr<DumpSide> side = ReadDumpSide(sparse("dump_0_9.json", (uint64_t{64} << 20) + 1), std::nullopt);
  ASSERT_FALSE(side.ok());
  EXPECT_NE(Message(side.status()).find("more than the 64.0 MiB"), std::string::npos) << side.status();
  // Below the cap the override file is read (and judged on its text).
  absl::StatusOr<Overrides> at = ReadOverrideFile(sparse("o2.txt", 1024));
  if (!at.ok()) EXPECT_EQ(Message(at.status()).find("more than the"), std::string::npos) << at.status();
}

TEST(ByteCount, ReadableUnits) {
  EXPECT_EQ(ByteCount(512), "512 B");
  EXPECT_EQ(ByteCount(1023), "1023 B");
  EXPECT_EQ(ByteCount(2000), "2.0 KiB");  // was "0.0 MiB"
  EXPECT_EQ(ByteCount((1u << 20) - 1), "1024.0 KiB");
  EXPECT_EQ(ByteCount(3u << 20), "3.0 MiB");
  EXPECT_EQ(ByteCount(uint64_t{5} << 29), "2.5 GiB");
}

}  // namespace
}  // namespace numtrace::analyzer
