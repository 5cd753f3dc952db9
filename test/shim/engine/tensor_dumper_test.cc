// Tensor dumps through the engine on the host device: the files of
// docs/format.md section 5, their bytes, every dtype, the checks (hash,
// launch) and the byte budget.
#include "shim/engine/tensor_dumper.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "common/format/dump_record.h"
#include "common/format/npy.h"
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

std::string ReadBytes(const fs::path& p) { return numtrace::testing::ReadFileText(p); }

class TensorDumpTest : public ::testing::Test {
 protected:
  void Make(std::map<std::string, std::string> env) {
    dir = numtrace::testing::FreshTestDir("dump").string();
    env["NUMTRACE_STEPS"] = "0";
    env["NUMTRACE_DUMP_DIR"] = dir;
    config = ConfigFrom(std::move(env));
    engine = std::make_unique<Engine>(config, &device, &sink);
    engine->EnableDumps(/*rank=*/3);
  }
  // Launches `symbol` on `in` -> `out`; the body writes `write` into out.
  void Launch(const std::string& symbol, std::vector<float>& in, std::vector<float>& out, float write) {
    for (auto* v : {&in, &out}) engine->OnAlloc({reinterpret_cast<uint64_t>(v->data()), v->size() * 4});
    LaunchBuilder b(symbol, std::hash<std::string>()(symbol));
    b.Pointer(in.data()).Pointer(out.data());
    engine->OnLaunchEnter(b.event());
    for (float& v : out) v = write;
    engine->OnLaunch(b.event());
  }
  bool AnyNote(std::string_view text) {
    for (const NoteRecord& n : sink.notes) {
      if (n.msg.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string dir;
  settings::Config config;
  HostDevice device;
  MemorySink sink;
  std::unique_ptr<Engine> engine;
};

TEST_F(TensorDumpTest, SelectedLaunchIsWrittenBeforeAndAfterWithItsSidecar) {
  Make({{"NUMTRACE_DUMP", "seq:1"}});
  std::vector<float> in(64, 1.5f), out(64, 0.0f);
  Launch("_Z3addPfS_", in, out, 2.0f);  // seq 0
  Launch("_Z3mulPfS_", in, out, 3.0f);  // seq 1: dumped
  Launch("_Z3addPfS_", in, out, 4.0f);  // seq 2
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 3u);
  EXPECT_TRUE(sink.notes.empty()) << sink.notes[0].msg;
  EXPECT_FALSE(fs::exists(dir + "/dump_3_0.json"));
  EXPECT_FALSE(fs::exists(dir + "/dump_3_2.json"));
  const std::string side = ReadBytes(dir + "/dump_3_1.json");
  const KernelRecord& k = sink.kernels[1];
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(k.buffers[1].stats.hash));
  EXPECT_EQ(side,
            std::string("{\"format\":\"numtrace-dump\",\"version\":1,\"seq\":1,\"step\":0,\"name\":\"_Z3mulPfS_\","
                        "\"rank\":3,\"buffers\":[") +
                "{\"arg\":0,\"role\":\"in\",\"dtype\":\"f32\",\"bytes\":256,\"n\":64,\"hash\":" +
                side.substr(side.find("\"hash\":") + 7, 18) +
                ",\"before\":\"dump_3_1.arg0.before.npy\",\"after\":\"dump_3_1.arg0.after.npy\"}," +
                "{\"arg\":1,\"role\":\"out\",\"dtype\":\"f32\",\"bytes\":256,\"n\":64,\"hash\":\"" + hash +
                "\",\"before\":\"dump_3_1.arg1.before.npy\",\"after\":\"dump_3_1.arg1.after.npy\"}]}\n");
  // The .npy bytes are the buffer's bytes: 2.0 before the launch, 3.0 after.
  const std::string header = NpyHeader(DType::kF32, 64);
  for (auto [file, value] : {std::pair{"dump_3_1.arg1.before.npy", 2.0f}, {"dump_3_1.arg1.after.npy", 3.0f}}) {
    const std::string npy = ReadBytes(dir + "/" + file);
    ASSERT_EQ(npy.size(), header.size() + 256) << file;
    EXPECT_EQ(npy.substr(0, header.size()), header);
    std::vector<float> want(64, value);
    EXPECT_EQ(std::memcmp(npy.data() + header.size(), want.data(), 256), 0) << file;
  }
  EXPECT_EQ(HashBytes({reinterpret_cast<const uint8_t*>(ReadBytes(dir + "/dump_3_1.arg1.after.npy").data()) +
                           header.size(),
                       256}),
            k.buffers[1].stats.hash);
}

TEST_F(TensorDumpTest, WithoutBeforeMeasurementsOnlyAfterIsDumped) {
  Make({{"NUMTRACE_DUMP", "seq:0"}, {"NUMTRACE_OUTPUTS", "all"}});
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  Launch("_Z3addPfS_", in, out, 2.0f);
  engine->Shutdown();
  EXPECT_TRUE(sink.notes.empty()) << sink.notes[0].msg;
  const std::string side = ReadBytes(dir + "/dump_3_0.json");
  EXPECT_EQ(side.find("\"before\""), std::string::npos) << side;
  EXPECT_NE(side.find("\"role\":\"unknown\""), std::string::npos) << side;
  EXPECT_TRUE(fs::exists(dir + "/dump_3_0.arg1.after.npy"));
  EXPECT_FALSE(fs::exists(dir + "/dump_3_0.arg1.before.npy"));
}

TEST_F(TensorDumpTest, EveryDtypeGetsItsNumpyDescr) {
  Make({{"NUMTRACE_DUMP", "k#0"}});
  const std::vector<DType> all = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kF8E4M3,
                                  DType::kF8E5M2, DType::kI64, DType::kI32, DType::kI16, DType::kI8,
                                  DType::kU8, DType::kBool, DType::kRaw};
  std::string list;
  for (DType t : all) list += (list.empty() ? "" : ",") + std::string(DTypeName(t));
  ASSERT_TRUE(engine->Annotate("k", list));
  std::vector<std::vector<uint8_t>> bufs;
  LaunchBuilder b("k", 9);
  for (size_t i = 0; i < all.size(); ++i) {
    bufs.emplace_back(64);
    for (size_t j = 0; j < 64; ++j) bufs.back()[j] = static_cast<uint8_t>(i * 7 + j);
    engine->OnAlloc({reinterpret_cast<uint64_t>(bufs.back().data()), 64});
  }
  for (auto& v : bufs) b.Pointer(v.data());
  engine->OnLaunchEnter(b.event());
  engine->OnLaunch(b.event());
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_TRUE(sink.notes.empty()) << sink.notes[0].msg;
  const std::string side = ReadBytes(dir + "/dump_3_0.json");
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_NE(side.find("{\"arg\":" + std::to_string(i) + ",\"role\":\"in\",\"dtype\":\"" +
                        std::string(DTypeName(all[i])) + "\",\"bytes\":64"),
              std::string::npos)
        << DTypeName(all[i]);
    const std::string npy = ReadBytes(dir + "/" + DumpNpyName(3, 0, i, 0, 1, "after"));
    const std::string header = NpyHeader(all[i], NpyElementCount(all[i], 64));
    EXPECT_NE(header.find("'descr': '" + std::string(NpyDescr(all[i])) + "'"), std::string::npos);
    ASSERT_EQ(npy.size(), header.size() + 64);
    EXPECT_EQ(npy.substr(header.size()), std::string(bufs[i].begin(), bufs[i].end())) << DTypeName(all[i]);
  }
}

TEST_F(TensorDumpTest, CopyThatDoesNotMatchTheTraceHashIsReported) {
  Make({{"NUMTRACE_DUMP", "seq:0"}});
  device.CorruptNextCopies(2);  // before and after
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  Launch("_Z3addPfS_", in, out, 2.0f);
  engine->Shutdown();
  EXPECT_TRUE(AnyNote("the dumped bytes after the launch hash to")) << sink.order;
  EXPECT_TRUE(AnyNote("the dumped bytes before the launch hash to"));
}

TEST_F(TensorDumpTest, LaunchOtherThanTheTraceNamedIsReported) {
  Make({{"NUMTRACE_DUMP", "seq:0"}, {"NUMTRACE_DUMP_EXPECT", "_Z3addPfS_@64,64"}});
  std::vector<float> in(16, 1.0f), out(16, 0.0f);  // 64 bytes each: sizes match
  Launch("_Z3mulPfS_", in, out, 2.0f);              // but another kernel
  engine->Shutdown();
  EXPECT_TRUE(AnyNote("is not the launch the trace named: dumped _Z3mulPfS_ with buffers of [64,64] bytes, "
                      "the trace had _Z3addPfS_ with [64,64]"));
  EXPECT_TRUE(fs::exists(dir + "/dump_3_0.json"));  // still written: the note says what it is
}

TEST_F(TensorDumpTest, BufferSizesOtherThanTheTraceNamedAreReported) {
  Make({{"NUMTRACE_DUMP", "seq:0"}, {"NUMTRACE_DUMP_EXPECT", "_Z3addPfS_@64,128"}});
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  Launch("_Z3addPfS_", in, out, 2.0f);
  engine->Shutdown();
  EXPECT_TRUE(AnyNote("is not the launch the trace named"));
}

TEST_F(TensorDumpTest, MatchingLaunchGivesNoNote) {
  Make({{"NUMTRACE_DUMP", "seq:0"}, {"NUMTRACE_DUMP_EXPECT", "_Z3addPfS_@64,64"}});
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  Launch("_Z3addPfS_", in, out, 2.0f);
  engine->Shutdown();
  EXPECT_TRUE(sink.notes.empty()) << sink.notes[0].msg;
}

TEST_F(TensorDumpTest, DumpsPastTheByteBudgetAreSkippedWithANote) {
  // Each launch dumps 2 buffers x 64 bytes x (before + after) = 256 bytes.
  Make({{"NUMTRACE_DUMP", "regex:add"}, {"NUMTRACE_DUMP_MAX_BYTES", "600"}});
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  for (int i = 0; i < 4; ++i) Launch("_Z3addPfS_", in, out, 2.0f + i);
  engine->Shutdown();
  EXPECT_TRUE(fs::exists(dir + "/dump_3_0.json"));
  EXPECT_TRUE(fs::exists(dir + "/dump_3_1.json"));
  EXPECT_FALSE(fs::exists(dir + "/dump_3_2.json"));
  EXPECT_FALSE(fs::exists(dir + "/dump_3_3.json"));
  ASSERT_EQ(sink.notes.size(), 2u);
  EXPECT_NE(sink.notes[0].msg.find("tensor dump of seq 2 (_Z3addPfS_, 256 bytes) skipped: "
                                   "NUMTRACE_DUMP_MAX_BYTES=600 would be passed (512 bytes dumped so far)"),
            std::string::npos)
      << sink.notes[0].msg;
}

TEST_F(TensorDumpTest, DeviceThatCannotCopyIsReported) {
  Make({{"NUMTRACE_DUMP", "seq:0"}});
  class NoCopyDevice : public HostDevice {
    bool EnqueueCopy(uint64_t, std::span<const MeasureItem>, uint64_t) override { return false; }
  } no_copy;
  engine = std::make_unique<Engine>(config, &no_copy, &sink);
  engine->EnableDumps(3);
  std::vector<float> in(16, 1.0f), out(16, 0.0f);
  Launch("_Z3addPfS_", in, out, 2.0f);
  engine->Shutdown();
  ASSERT_EQ(sink.kernels.size(), 1u);  // the trace is unharmed
  EXPECT_TRUE(AnyNote("the device could not queue the copy before the launch"));
}

TEST_F(TensorDumpTest, DumpingLeavesTheRecordsUnchanged) {
  std::vector<KernelRecord> with, without;
  for (bool dump : {false, true}) {
    sink.kernels.clear();
    std::map<std::string, std::string> env;
    if (dump) env["NUMTRACE_DUMP"] = "regex:.";
    Make(env);
    std::vector<float> in(16, 1.0f), out(16, 0.0f);
    for (int i = 0; i < 3; ++i) Launch("_Z3addPfS_", in, out, 2.0f + i);
    engine->Shutdown();
    (dump ? with : without) = sink.kernels;
  }
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    ASSERT_EQ(with[i].buffers.size(), without[i].buffers.size());
    for (size_t j = 0; j < with[i].buffers.size(); ++j) {
      EXPECT_EQ(with[i].buffers[j].stats.hash, without[i].buffers[j].stats.hash);
      EXPECT_EQ(with[i].buffers[j].role, without[i].buffers[j].role);
    }
  }
}

}  // namespace
}  // namespace numtrace::shim
