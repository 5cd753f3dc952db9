// `numtrace-diff --tensors` end to end in process: dump directories,
// sidecars and bare .npy files in, terminal/JSON/HTML out, exit codes as for
// a trace diff, bad input as one line.
#include "analyzer/cli/tensor_command.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analyzer/cli/diff_command.h"
#include "test/analyzer/tensors/dump_files.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;
using numtrace::testing::BytesOf;
using numtrace::testing::FreshTestDir;
using numtrace::testing::ReadFileText;
using numtrace::testing::WriteDump;

struct CliRun {
  int code;
  std::string out, err;
};

CliRun Diff(std::vector<std::string> args) {
  std::vector<const char*> argv = {"numtrace-diff"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int code = DiffMain(static_cast<int>(argv.size()), argv.data(), out, err, false);
  return {code, out.str(), err.str()};
}

class TensorCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = FreshTestDir("tensors");
    a.resize(640);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.25f - 7.0f;
    before.assign(640, 0.0f);
  }
  fs::path dir;
  std::vector<float> a, before;
};

TEST_F(TensorCommandTest, IdenticalDumpsExitZero) {
  WriteDump(dir / "A", 41, DType::kF32, BytesOf(before), BytesOf(a));
  WriteDump(dir / "B", 42, DType::kF32, BytesOf(before), BytesOf(a));
  CliRun r = Diff({"--tensors", (dir / "A").string(), (dir / "B").string(), "--color", "never"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("numtrace-diff --tensors: identical"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arg 1 after (out, f32[640]): bitwise equal"), std::string::npos) << r.out;
}

TEST_F(TensorCommandTest, DivergedDumpsGiveSection6JsonAndHtml) {
  std::vector<float> b = a;
  b[17] = 1000.0f;
  b[3] = std::nanf("");
  WriteDump(dir / "A", 41, DType::kF32, BytesOf(before), BytesOf(a));
  fs::path side_b = WriteDump(dir / "B", 42, DType::kF32, BytesOf(before), BytesOf(b));
  const std::string json = (dir / "t.json").string(), html = (dir / "t.html").string();
  CliRun r = Diff({"--tensors", (dir / "A").string(), side_b.string(), "--json", json, "-o", html,
                "--color", "never"});
  ASSERT_EQ(r.code, kExitDiverged) << r.err;
  EXPECT_NE(r.out.find("first mismatch [3]: A -6.25, B nan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max abs err 1002.75 at [17]: A -2.75, B 1000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NaN/Inf: A 0 NaN, 0 Inf; B 1 NaN, 0 Inf at [3]"), std::string::npos) << r.out;

  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(ReadFileText(json));
  EXPECT_EQ(std::string_view(doc["format"]), "numtrace-tensor-diff");
  EXPECT_EQ(int64_t(doc["version"]), 1);
  EXPECT_EQ(std::string_view(doc["verdict"]), "diverged");
  EXPECT_EQ(uint64_t(doc["a"]["seq"]), 41u);
  EXPECT_EQ(uint64_t(doc["b"]["seq"]), 42u);
  EXPECT_EQ(std::string_view(doc["b"]["name"]), "gemm");
  EXPECT_EQ(double(doc["tolerance"]["rtol"]), 1e-5);
  simdjson::dom::array buffers = doc["buffers"];
  ASSERT_EQ(buffers.size(), 2u);  // before and after of arg 1
  simdjson::dom::element after = buffers.at(1);
  EXPECT_EQ(uint64_t(after["arg"]), 1u);
  EXPECT_EQ(std::string_view(after["role"]), "out");
  EXPECT_EQ(std::string_view(after["when"]), "after");
  EXPECT_EQ(std::string_view(after["dtype"]), "f32");
  EXPECT_EQ(uint64_t(after["n"]), 640u);
  EXPECT_EQ(uint64_t(after["equal"]), 638u);
  EXPECT_EQ(uint64_t(after["mismatched"]), 2u);
  EXPECT_EQ(double(after["max_abs"]), 1002.75);
  EXPECT_EQ(uint64_t(after["max_abs_index"]), 17u);
  EXPECT_EQ(uint64_t(after["first_mismatch"]), 3u);
  EXPECT_EQ(uint64_t(after["ulp"]["0"]), 638u);
  EXPECT_EQ(uint64_t(after["ulp"][">255"]), 1u);  // the NaN is left out
  EXPECT_EQ(uint64_t(after["nonfinite"]["a"]), 0u);
  EXPECT_EQ(uint64_t(after["nonfinite"]["b"]), 1u);
  EXPECT_TRUE(after["nonfinite"]["first_index_a"].is_null());
  EXPECT_EQ(uint64_t(after["nonfinite"]["first_index_b"]), 3u);
  EXPECT_EQ(std::string_view(buffers.at(0)["when"]), "before");
  EXPECT_EQ(uint64_t(buffers.at(0)["mismatched"]), 0u);

  const std::string page = ReadFileText(html);
  EXPECT_NE(page.find("<h1>numtrace tensor diff: <span class=\"v-diverged\">diverged</span></h1>"), std::string::npos);
  EXPECT_NE(page.find("class=hist"), std::string::npos);
  EXPECT_NE(page.find("class=strip"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);  // self-contained, no script
}

TEST_F(TensorCommandTest, WithinToleranceExitsZero) {
  std::vector<float> b = a;
  b[100] = std::nextafter(a[100], 1e9f);
  WriteDump(dir / "A", 1, DType::kF32, BytesOf(before), BytesOf(a));
  WriteDump(dir / "B", 1, DType::kF32, BytesOf(before), BytesOf(b));
  CliRun r = Diff({"--tensors", (dir / "A").string(), (dir / "B").string(), "--color", "never"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("within_tolerance"), std::string::npos) << r.out;
  r = Diff({"--tensors", (dir / "A").string(), (dir / "B").string(), "--rtol", "0", "-q"});
  EXPECT_EQ(r.code, kExitDiverged);
  EXPECT_EQ(r.out, "");
}

TEST_F(TensorCommandTest, BareNpyFilesWithDtype) {
  std::vector<uint16_t> x = {0x3f80, 0x4000}, y = {0x3f80, 0x4001};
  numtrace::testing::WriteNpy(dir / "x.npy", DType::kBF16, BytesOf(x));
  numtrace::testing::WriteNpy(dir / "y.npy", DType::kBF16, BytesOf(y));
  CliRun r = Diff({"--tensors", (dir / "x.npy").string(), (dir / "y.npy").string(), "--dtype", "bf16", "--rtol", "0",
                "--color", "never"});
  EXPECT_EQ(r.code, kExitDiverged) << r.err;
  EXPECT_NE(r.out.find("(unknown, bf16[2]): 1 mismatched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first mismatch [1]: A 2, B 2.015625"), std::string::npos) << r.out;
}

TEST_F(TensorCommandTest, BadInputIsOneLineAndExitTwo) {
  WriteDump(dir / "A", 1, DType::kF32, BytesOf(before), BytesOf(a));
  fs::create_directories(dir / "empty");
  std::vector<std::vector<std::string>> bad = {
      {"--tensors", (dir / "A").string(), (dir / "missing").string()},
      {"--tensors", (dir / "A").string(), (dir / "empty").string()},
      {"--tensors", (dir / "A").string(), (dir / "A").string(), "--dtype", "f33"},
      {(dir / "A").string(), (dir / "A").string(), "--dtype", "f32"},
  };
  WriteDump(dir / "A2", 1, DType::kF32, BytesOf(before), BytesOf(a));
  WriteDump(dir / "A2", 2, DType::kF32, BytesOf(before), BytesOf(a));
  bad.push_back({"--tensors", (dir / "A2").string(), (dir / "A").string()});
  // A sidecar naming an .npy of the wrong size.
  fs::path side = WriteDump(dir / "C", 1, DType::kF32, BytesOf(before), BytesOf(a));
  numtrace::testing::WriteNpy(dir / "C" / DumpNpyName(0, 1, 1, 0, 1, "after"), DType::kF32, std::vector<uint8_t>(8));
  bad.push_back({"--tensors", side.string(), (dir / "A").string()});
  for (const auto& args : bad) {
    CliRun r = Diff(args);
    EXPECT_EQ(r.code, kExitError) << args[1] << " " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("numtrace-diff: ", 0), 0u) << r.err;
  }
}

TEST_F(TensorCommandTest, OutputsAreNotOverwrittenWithoutForce) {
  WriteDump(dir / "A", 1, DType::kF32, BytesOf(before), BytesOf(a));
  numtrace::testing::WriteFileText(dir / "t.json", "keep");
  CliRun r = Diff({"--tensors", (dir / "A").string(), (dir / "A").string(), "--json", (dir / "t.json").string()});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(ReadFileText(dir / "t.json"), "keep");
  r = Diff({"--tensors", (dir / "A").string(), (dir / "A").string(), "--json", (dir / "t.json").string(), "--force", "-q"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(ReadFileText(dir / "t.json").find("numtrace-tensor-diff"), std::string::npos);
}

TEST_F(TensorCommandTest, BytesThatDoNotHashToTheTracesHashAreWarned) {
  fs::path side = WriteDump(dir / "A", 1, DType::kF32, BytesOf(before), BytesOf(a));
  std::vector<float> changed = a;
  changed[0] = 99.0f;  // the sidecar's hash is of `a`
  numtrace::testing::WriteNpy(dir / "A" / DumpNpyName(0, 1, 1, 0, 1, "after"), DType::kF32, BytesOf(changed));
  WriteDump(dir / "B", 1, DType::kF32, BytesOf(before), BytesOf(a));
  CliRun r = Diff({"--tensors", side.string(), (dir / "B").string(), "--color", "never"});
  EXPECT_NE(r.out.find("warning: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", the trace measured "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace numtrace::analyzer
