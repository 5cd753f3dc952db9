// An outsider adds a reader by one table row in analyzer/read/importer.cc and
// one reader (toy_ops_reader.{h,cc}): this test is built against the read
// library with importer.cc as the build copies it with that row (and its
// include) added, nothing else changed (test/analyzer/read/CMakeLists.txt).
// Every entry point then takes the new format: detection by content, the
// per-rank file names, pairing of run directories, counted bad records, the
// list of formats in the "not a trace" error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analyzer/read/importer.h"
#include "analyzer/read/input.h"
#include "test/util/scratch_dir.h"

namespace numtrace::analyzer {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string ScratchDir(const std::string& tag) { return numtrace::testing::FreshTestDir(tag).string(); }

TEST(OutsiderReader, OneRowMakesEveryEntryPointReadTheNewFormat) {
  const Importer* toy = FindImporter("toy-ops");
  ASSERT_NE(toy, nullptr);
  EXPECT_EQ(&Importers().back(), toy);
  const std::string dir = ScratchDir("outsider");
  // Named as no format names its files: found by its first bytes.
  Write(dir + "/ops.txt", "# toy ops v1\nlayers.0/mm,12.5\nnot a record\nlayers.0/add,3\n");
  absl::StatusOr<Trace> t = ReadTrace(dir + "/ops.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, "toy op list");
  ASSERT_EQ(t->kernels.size(), 2u);
  EXPECT_EQ(t->DisplayName(t->kernels[1]), "layers.0/add");
  EXPECT_EQ(t->BuffersOf(t->kernels[0])[0].stats.l2, 12.5);
  ASSERT_EQ(t->skipped.size(), 1u);
  EXPECT_EQ(t->skipped[0].name, "bad_line");
  EXPECT_EQ(t->skipped[0].first_line, 3u);
  EXPECT_EQ(t->SkippedCount("bad_line"), 1u);

  // From bytes, and asked for by name.
  t = ReadTraceBytes("# toy ops v1\na,1\n", "x", toy);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 1u);
  EXPECT_FALSE(ReadTraceBytes("# toy ops v1\na,1\n", "x", FindImporter("numtrace")).ok());

  // Its file names give the rank, and run directories pair by it.
  std::optional<TraceFileName> f = ParseTraceFileName("runA/toy_rank_3.csv");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->rank, 3);
  EXPECT_EQ(f->importer, toy);
  for (const char* run : {"/a", "/b"}) {
    std::filesystem::create_directories(dir + run);
    for (int r : {0, 1}) Write(dir + run + "/toy_rank_" + std::to_string(r) + ".csv", "# toy ops v1\nm/mm,1\n");
  }
  absl::StatusOr<std::vector<RankPair>> pairs = PairInputs(dir + "/a", dir + "/b");
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[1].rank, 1);
  EXPECT_EQ((*pairs)[1].path_b, dir + "/b/toy_rank_1.csv");

  // The formats numtrace-diff reads, in the error for anything else, name it.
  Write(dir + "/other.txt", "something else\n");
  EXPECT_EQ(ReadTrace(dir + "/other.txt").status().message(),
            dir + "/other.txt: not a trace numtrace-diff reads (DebugMode JSON log, numtrace trace, DebugMode log, "
                  "toy op list)");
  // The other rows read as before.
  Write(dir + "/a.log", "[m/op_0_mm]\n  Output hash: 1.0e+00\n  Location: x.py:1\n\n");
  t = ReadTrace(dir + "/a.log");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, "DebugMode log");
}

}  // namespace
}  // namespace numtrace::analyzer
