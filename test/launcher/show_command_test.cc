#include <fstream>
#include "launcher/show_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "common/format/jsonl_writer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/launcher/launcher_test_util.h"
#include "test/util/test_paths.h"

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestContext;

const std::string kTrace = std::string(NUMTRACE_SOURCE_DIR) + "/examples/basic/run_a/rank_0.ntrace.jsonl";

int CountLines(const std::string& s, const std::string& prefix) {
  std::istringstream in(s);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

TEST(ParseSeqRange, AcceptsSingleClosedAndOpenRanges) {
  EXPECT_EQ(ParseSeqRange("7")->first, 7u);
  EXPECT_EQ(ParseSeqRange("7")->last, 7u);
  EXPECT_EQ(ParseSeqRange("3..9")->last, 9u);
  EXPECT_EQ(ParseSeqRange("3..")->last, UINT64_MAX);
  EXPECT_EQ(ParseSeqRange("..4")->first, 0u);
  EXPECT_FALSE(ParseSeqRange("9..3"));
  EXPECT_FALSE(ParseSeqRange(".."));
  EXPECT_FALSE(ParseSeqRange("x"));
  EXPECT_FALSE(ParseSeqRange("-1"));
}

TEST(ShowCommand, ListsKernelsWithTheirBuffersDtypesAndStats) {
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", kTrace, "--seq", "0..4"}, t.ctx), 0) << t.err.str();
  const std::string out = t.out.str();
  EXPECT_THAT(out, HasSubstr("label A, rank 0"));
  EXPECT_THAT(out, HasSubstr("device 0: NVIDIA H200 (cc 9.0), driver 580.159, CUDA 13.0"));
  EXPECT_THAT(out, HasSubstr("captured steps: 1 2 3; outputs changed; all kernels"));
  EXPECT_EQ(CountLines(out, "seq "), 5);
  EXPECT_THAT(out, HasSubstr("seq 0  step 1  void at::native::vectorized_elementwise_kernel"));
  EXPECT_THAT(out, HasSubstr("    arg "));
  EXPECT_THAT(out, HasSubstr("hash="));
  EXPECT_THAT(out, HasSubstr("5 of "));
}

TEST(ShowCommand, ShowsWhereInTheModelAKernelCameFrom) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("show_prov_" + std::to_string(::getpid()) + ".ntrace.jsonl");
  std::string text;
  TraceHeader h;
  h.producer = "test";
  AppendJsonLine(h, &text);
  KernelRecord k;
  k.name = "gemm";
  k.scope = "layers.1.fc";
  k.op = "aten::addmm";
  k.phase = Phase::kForward;
  k.src = "train.py:42";
  AppendJsonLine(k, &text);
  KernelRecord plain;
  plain.seq = 1;
  plain.name = "fill";
  AppendJsonLine(plain, &text);
  FooterRecord f;
  f.kernels = 2;
  AppendJsonLine(f, &text);
  std::ofstream(path) << text;
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", path.string()}, t.ctx), 0) << t.err.str();
  std::filesystem::remove(path);
  EXPECT_THAT(t.out.str(), HasSubstr("seq 0  gemm  grid"));
  EXPECT_THAT(t.out.str(), HasSubstr("\n  in layers.1.fc (aten::addmm, forward) at train.py:42\n"));
  EXPECT_EQ(CountLines(t.out.str(), "  in "), 1);
}

// Issue 24: an operator-level record shows as an operator call with each
// tensor's shape and device, not a launch geometry of zeros.
TEST(ShowCommand, ShowsAnOperatorCallWithShapesAndDevices) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("show_ops_" + std::to_string(::getpid()) + ".ntrace.jsonl");
  std::string text;
  TraceHeader h;
  h.producer = "test";
  h.capture.emplace().level = CaptureLevel::kOps;
  AppendJsonLine(h, &text);
  KernelRecord k;
  k.name = "aten::addmm";
  k.op_level = true;
  BufferRecord b;
  b.dtype = DType::kF32;
  b.role = Role::kIn;
  b.bytes = 24;
  b.stats.n = 6;
  b.shape = std::vector<int64_t>{2, 3};
  b.device = "cpu";
  k.buffers.push_back(b);
  AppendJsonLine(k, &text);
  FooterRecord f;
  f.kernels = 1;
  AppendJsonLine(f, &text);
  std::ofstream(path) << text;
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", path.string()}, t.ctx), 0) << t.err.str();
  std::filesystem::remove(path);
  EXPECT_THAT(t.out.str(), HasSubstr("seq 0  aten::addmm  (operator call)\n"));
  EXPECT_THAT(t.out.str(), HasSubstr("    arg 0  f32[2,3] cpu (default)  in  24 B  n=6"));
  EXPECT_THAT(t.out.str(), Not(HasSubstr("grid 0x0x0")));
}

TEST(ShowCommand, KernelRegexSelectsByName) {
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", kTrace, "--kernel", "FillFunctor"}, t.ctx), 0);
  const std::string out = t.out.str();
  EXPECT_GT(CountLines(out, "seq "), 0);
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("seq ", 0) == 0) {
      EXPECT_THAT(line, HasSubstr("FillFunctor"));
    }
  }
}

TEST(ShowCommand, JsonPrintsTheSelectedRecordsAsTheFileHoldsThem) {
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", kTrace, "--seq", "2..3", "--json"}, t.ctx), 0);
  const std::string out = t.out.str();
  EXPECT_EQ(CountLines(out, "{\"type\":\"kernel\",\"seq\":2,"), 1);
  EXPECT_EQ(CountLines(out, "{\"type\":\"kernel\",\"seq\":3,"), 1);
  EXPECT_EQ(CountLines(out, "{"), 2);
}

TEST(ShowCommand, BadInputIsOneLineAndExit2) {
  TestContext t;
  EXPECT_EQ(ShowCommandMain({"show", "/no/such/trace.jsonl"}, t.ctx), 2);
  EXPECT_EQ(CountLines(t.err.str(), "numtrace show: "), 1);
  TestContext bad_seq;
  EXPECT_EQ(ShowCommandMain({"show", kTrace, "--seq", "5..1"}, bad_seq.ctx), 2);
  EXPECT_THAT(bad_seq.err.str(), HasSubstr("--seq '5..1'"));
  TestContext bad_re;
  EXPECT_EQ(ShowCommandMain({"show", kTrace, "--kernel", "("}, bad_re.ctx), 2);
  EXPECT_THAT(bad_re.err.str(), HasSubstr("not a valid regex"));
  EXPECT_THAT(bad_re.out.str(), Not(HasSubstr("seq ")));
}

TEST(ShowCommand, AWatchTraceSaysHowManyStepsWereDigested) {
  TempDir tmp;
  const std::string trace = tmp / "w.ntrace.jsonl";
  {
    std::ofstream f(trace);
    f << R"({"type":"header","format":"numtrace-trace","version":1,"capture":{"steps":[],"outputs":"changed","selector":"","watch":"sampled"}})" "\n"
      << R"({"type":"kernel_name","id":0,"name":"k"})" "\n"
      << R"({"type":"digest","step":4,"kernels":2,"hash":"0000000000000001","nonfinite":null,"kernel_hashes":["0000000000000002","0000000000000003"],"names":[0,0]})" "\n"
      << R"({"type":"digest","step":5,"kernels":1,"hash":"0000000000000001","nonfinite":0,"lost":1,"kernel_hashes":["0000000000000000"],"names":[0]})" "\n";
  }
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", trace}, t.ctx), 0) << t.err.str();
  EXPECT_THAT(t.out.str(), HasSubstr("watch sampled: 2 steps digested (4-5), 3 launches, 1 not digested; "
                                     "first NaN/Inf: step 5, launch 0"));
}

TEST(ShowCommand, EnvPrintsTheMergedEnvironmentInTheKeyTablesOrder) {
  TempDir tmp;
  const std::string trace = tmp / "e.ntrace.jsonl";
  {
    std::ofstream f(trace);
    f << R"({"type":"header","format":"numtrace-trace","version":1,)"
         R"("environment":{"gpu.name":"NVIDIA H200","zz.unknown":"1","torch.float32_matmul_precision":"highest"}})" "\n"
      << R"({"type":"environment","values":{"torch.float32_matmul_precision":"high","env.NCCL_ALGO":"Tree\u001b[2J"}})" "\n";
  }
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", trace, "--env"}, t.ctx), 0) << t.err.str();
  EXPECT_EQ(t.out.str(),
            "torch.float32_matmul_precision = high\n"
            "env.NCCL_ALGO = Tree^[[2J\n"
            "gpu.name = NVIDIA H200\n"
            "zz.unknown = 1\n");
  TestContext none;
  ASSERT_EQ(ShowCommandMain({"show", kTrace, "--env"}, none.ctx), 0) << none.err.str();
  EXPECT_THAT(none.out.str(), HasSubstr("no environment recorded"));
}

TEST(ShowCommand, HelpShowsExamples) {
  TestContext t;
  EXPECT_EQ(ShowCommandMain({"show", "--help"}, t.ctx), 0);
  EXPECT_THAT(t.out.str(), HasSubstr("Examples:"));
}

}  // namespace
}  // namespace numtrace::launcher
