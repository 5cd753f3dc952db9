// numtrace-diff's outputs as a hostile user tries them: an output that is an
// input, a device, standard output.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/diff_command.h"
#include "common/format/jsonl_writer.h"
#include "test/util/scratch_dir.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using numtrace::testing::FreshTestDir;
using numtrace::testing::ReadFileText;
using numtrace::testing::WriteFileText;

std::string SmallTrace(double value) {
  std::string out;
  TraceHeader h;
  h.producer = "test";
  AppendJsonLine(h, &out);
  for (uint64_t i = 0; i < 3; ++i) {
    KernelRecord k;
    k.seq = i;
    k.name = i == 1 ? "add" : "gemm";
    BufferRecord b;
    b.bytes = 16;
    b.dtype = DType::kF32;
    b.role = Role::kOut;
    b.stats.n = 4;
    b.stats.l1 = b.stats.l2 = b.stats.sum = value * static_cast<double>(i + 1);
    b.stats.hash = static_cast<uint64_t>(value * 1000) + i;
    k.buffers.push_back(b);
    AppendJsonLine(k, &out);
  }
  FooterRecord f;
  f.kernels = f.launches = 3;
  AppendJsonLine(f, &out);
  return out;
}

class DiffOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("diffout");
    a_ = SmallTrace(1.0);
    WriteFileText(dir_ / "a.jsonl", a_);
    WriteFileText(dir_ / "b.jsonl", SmallTrace(2.0));
    fs::create_directories(dir_ / "runA");
    fs::create_directories(dir_ / "runB");
    WriteFileText(dir_ / "runA" / "rank_0.ntrace.jsonl", a_);
    WriteFileText(dir_ / "runB" / "rank_0.ntrace.jsonl", SmallTrace(2.0));
  }
  void TearDown() override { fs::remove_all(dir_); }
  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "numtrace-diff");
    std::vector<const char*> argv;
    for (const std::string& s : args) argv.push_back(s.c_str());
    out_.str("");
    err_.str("");
    return DiffMain(static_cast<int>(argv.size()), argv.data(), out_, err_, false);
  }
  std::string P(const std::string& n) const { return (dir_ / n).string(); }
  fs::path dir_;
  std::string a_;
  std::ostringstream out_, err_;
};

TEST_F(DiffOutputsTest, NoOutputFlagCanReplaceAnInput) {
  const std::string cwd_rel = fs::relative(dir_ / "a.jsonl").string();
  for (const auto& [flag, path] : std::vector<std::pair<std::string, std::string>>{
           {"-o", P("a.jsonl")}, {"--json", P("b.jsonl")}, {"--json", "./" + cwd_rel},
           {"-o", P("runA/rank_0.ntrace.jsonl")}}) {
    const bool dirs = path.find("runA") != std::string::npos;
    EXPECT_EQ(Run({dirs ? P("runA") : P("a.jsonl"), dirs ? P("runB") : P("b.jsonl"), flag, path, "--force"}),
              kExitError) << flag << " " << path;
    EXPECT_NE(err_.str().find("would overwrite the input"), std::string::npos) << err_.str();
    const std::string e = err_.str();
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
  }
  EXPECT_EQ(ReadFileText(dir_ / "a.jsonl"), a_);
  EXPECT_EQ(ReadFileText(dir_ / "runA" / "rank_0.ntrace.jsonl"), a_);
}

TEST_F(DiffOutputsTest, DeviceOutputIsRefusedWithForce) {
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "-o", "/dev/full", "--force"}), kExitError);
  EXPECT_NE(err_.str().find("/dev/full"), std::string::npos) << err_.str();
}

TEST_F(DiffOutputsTest, JsonDashGoesToStandardOutputAlone) {
  EXPECT_EQ(Run({P("a.jsonl"), P("b.jsonl"), "--json", "-"}), kExitDiverged) << err_.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(out_.str())).get(doc), simdjson::SUCCESS) << out_.str();
  EXPECT_FALSE(fs::exists("-"));
}

}  // namespace
}  // namespace numtrace::analyzer
