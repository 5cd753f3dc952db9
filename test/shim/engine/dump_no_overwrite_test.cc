// No dump overwrites another (issue 15): a second writer of the same launch
// into one directory - another process of the rank, or a later run pointed
// at the same --dump-dir - gets its own pid's names; a third finds both
// taken and is refused with a note; the first set's bytes never change.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/format/dump_record.h"
#include "common/settings/config.h"
#include "shim/device/host_device.h"
#include "shim/engine/engine.h"
#include "test/shim/engine/engine_test_util.h"
#include "test/util/scratch_dir.h"

namespace numtrace::shim {
namespace {

namespace fs = std::filesystem;
using testing::ConfigFrom;
using testing::LaunchBuilder;
using testing::MemorySink;

// One process's capture: launches kernel `k` twice (seq 0 and 1), writing
// `value` into its output; seq 1 is dumped into `dir`. Returns the notes.
std::vector<std::string> DumpOnce(const std::string& dir, float value) {
  settings::Config config =
      ConfigFrom({{"NUMTRACE_STEPS", "0"}, {"NUMTRACE_DUMP", "seq:1"}, {"NUMTRACE_DUMP_DIR", dir}});
  HostDevice device;
  MemorySink sink;
  Engine engine(config, &device, &sink);
  engine.EnableDumps(/*rank=*/0);
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  for (auto* v : {&in, &out}) engine.OnAlloc({reinterpret_cast<uint64_t>(v->data()), v->size() * 4});
  for (int i = 0; i < 2; ++i) {
    LaunchBuilder b("_Z1kPfS_", 77);
    b.Pointer(in.data()).Pointer(out.data());
    engine.OnLaunchEnter(b.event());
    for (float& v : out) v = value;
    engine.OnLaunch(b.event());
  }
  engine.Shutdown();
  std::vector<std::string> notes;
  for (const NoteRecord& n : sink.notes) notes.push_back(n.msg);
  return notes;
}

std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    out[e.path().filename().string()] = numtrace::testing::ReadFileText(e.path());
  }
  return out;
}

TEST(DumpNoOverwrite, ASecondWriterGetsItsPidsNamesAndAThirdIsRefused) {
  const std::string dir = numtrace::testing::FreshTestDir("dump-excl").string();
  EXPECT_TRUE(DumpOnce(dir, 2.0f).empty());
  const std::map<std::string, std::string> first = Files(dir);
  ASSERT_TRUE(first.count("dump_0_1.json")) << first.size();
  ASSERT_TRUE(first.count("dump_0_1.arg1.after.npy"));

  // A second run into the same directory: its own, complete set.
  EXPECT_TRUE(DumpOnce(dir, 5.0f).empty());
  const std::string pid = std::to_string(getpid());
  const std::map<std::string, std::string> second = Files(dir);
  const std::string sidecar = "dump_0_1.pid" + pid + ".json";
  ASSERT_TRUE(second.count(sidecar));
  ASSERT_TRUE(second.count("dump_0_1.pid" + pid + ".arg1.after.npy"));
  EXPECT_NE(second.at(sidecar).find("\"after\":\"dump_0_1.pid" + pid + ".arg1.after.npy\""), std::string::npos)
      << second.at(sidecar);
  EXPECT_NE(second.at("dump_0_1.pid" + pid + ".arg1.after.npy"), first.at("dump_0_1.arg1.after.npy"));
  for (const auto& [name, bytes] : first) EXPECT_EQ(second.at(name), bytes) << name << " was rewritten";

  // A third (same pid, so both names are taken): refused with a note naming
  // both files, and nothing of the two sets changes.
  std::vector<std::string> notes = DumpOnce(dir, 9.0f);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("tensor dump of seq 1 not written: " + dir + "/dump_0_1.json and " + dir + "/" +
                          sidecar + " exist"),
            std::string::npos)
      << notes[0];
  EXPECT_EQ(Files(dir), second);
  fs::remove_all(dir);
}

TEST(DumpNoOverwrite, TwoProcessesOfOneRankNeverShareASet) {
  const std::string dir = numtrace::testing::FreshTestDir("dump-fork").string();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(DumpOnce(dir, 3.0f).empty() ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(DumpOnce(dir, 4.0f).empty());
  // The child took the plain names; this process its pid's: two sidecars,
  // each naming only its own arrays.
  std::map<std::string, std::string> files = Files(dir);
  const std::string mine = "dump_0_1.pid" + std::to_string(getpid());
  ASSERT_TRUE(files.count("dump_0_1.json"));
  ASSERT_TRUE(files.count(mine + ".json"));
  EXPECT_EQ(files.at("dump_0_1.json").find(".pid"), std::string::npos);
  EXPECT_NE(files.at(mine + ".json").find("\"after\":\"" + mine + ".arg1.after.npy\""), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numtrace::shim
