// Runs the numtrace-make-pair binary for small pairs and checks what it
// wrote: every line parses, header first, footer last with the right count,
// seq dense, stats self-consistent; runs agree before the planted divergence
// and not after; the same seed gives the same bytes; bad paths fail cleanly.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace {

namespace fs = std::filesystem;
using numtrace::testing::ReadFileText;

const std::string kTool = std::string(NUMTRACE_BINARY_DIR) + "/bin/numtrace-make-pair";

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

RunResult RunTool(const std::string& args) {
  RunResult r;
  FILE* p = popen((kTool + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

uint64_t Captured(const std::string& out, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(pattern))) return ~uint64_t{0};
  return std::stoull(m[1]);
}

struct KernelLine {
  uint64_t seq = 0;
  std::string name;
  std::vector<std::string> out_hashes;  // non-constant float outputs only
};

// Parses a trace, asserting the format's invariants; returns its kernels.
std::vector<KernelLine> ParseTrace(const fs::path& path) {
  std::vector<KernelLine> kernels;
  std::ifstream in(path);
  std::string line;
  simdjson::dom::parser parser;
  uint64_t line_no = 0;
  bool saw_footer = false;
  uint64_t footer_kernels = 0;
  const std::regex hex16("[0-9a-f]{16}");
  while (std::getline(in, line)) {
    ++line_no;
    SCOPED_TRACE(path.string() + ":" + std::to_string(line_no));
    EXPECT_FALSE(saw_footer) << "a record after the footer";
    simdjson::dom::element doc;
    auto err = parser.parse(line).get(doc);
    if (err) {
      ADD_FAILURE() << "does not parse: " << simdjson::error_message(err);
      continue;
    }
    std::string_view type = doc["type"].get_string().value();
    if (line_no == 1) {
      EXPECT_EQ(type, "header");
      EXPECT_EQ(doc["format"].get_string().value(), "numtrace-trace");
      EXPECT_EQ(doc["version"].get_int64().value(), 1);
      continue;
    }
    if (type == "footer") {
      saw_footer = true;
      footer_kernels = doc["kernels"].get_uint64().value();
      continue;
    }
    if (type != "kernel") continue;
    KernelLine k;
    k.seq = doc["seq"].get_uint64().value();
    EXPECT_EQ(k.seq, kernels.size()) << "seq not dense";
    k.name = std::string(doc["name"].get_string().value());
    EXPECT_FALSE(k.name.empty());
    simdjson::dom::array buffers;  // a named local: value() on a temporary would dangle
    if (doc["buffers"].get_array().get(buffers) != simdjson::SUCCESS) {
      ADD_FAILURE() << "kernel without a buffers array";
      continue;
    }
    for (simdjson::dom::element b : buffers) {
      std::string_view dtype = b["dtype"].get_string().value();
      std::string_view role = b["role"].get_string().value();
      EXPECT_THAT(role, testing::AnyOf("in", "out", "unknown"));
      simdjson::dom::element s = b["stats"].value();
      std::string hash(s["hash"].get_string().value());
      EXPECT_TRUE(std::regex_match(hash, hex16)) << hash;
      const double n = static_cast<double>(s["n"].get_uint64().value());
      EXPECT_GT(n, 0);
      EXPECT_EQ(b["bytes"].get_uint64().value() % static_cast<uint64_t>(n), 0u);
      const double finite = n - static_cast<double>(s["nan"].get_uint64().value());
      const double mn = s["min"].get_double().value(), mx = s["max"].get_double().value();
      const double sum = s["sum"].get_double().value(), l1 = s["l1"].get_double().value(),
                   l2 = s["l2"].get_double().value();
      EXPECT_LE(mn, mx);
      EXPECT_LE(std::abs(sum), l1 * (1 + 1e-9));
      EXPECT_LE(l1, std::sqrt(finite) * l2 * (1 + 1e-9));
      EXPECT_LE(l2, std::sqrt(finite) * std::max(std::abs(mn), std::abs(mx)) * (1 + 1e-9));
      const bool is_float = dtype == "f32" || dtype == "bf16" || dtype == "f16";
      // Fills (min == max) and integer outputs do not depend on the values
      // that diverge, so only varying float outputs are compared.
      if (role != "in" && is_float && mn != mx) k.out_hashes.push_back(hash);
    }
    kernels.push_back(std::move(k));
  }
  EXPECT_TRUE(saw_footer) << path << ": no footer";
  EXPECT_EQ(footer_kernels, kernels.size());
  return kernels;
}

class MakeTracePairTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = numtrace::testing::FreshTestDir("make_pair_test");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Pair(const std::string& a, const std::string& b) {
    return "--out-a " + (dir_ / a).string() + " --out-b " + (dir_ / b).string();
  }
  fs::path dir_;
};

TEST_F(MakeTracePairTest, WritesValidTracesThatAgreeUntilThePlantedDivergence) {
  RunResult r = RunTool("--kernels 4000 --seed 5 " + Pair("a.jsonl", "b.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const uint64_t div_a = Captured(r.output, R"(planted divergence: A seq (\d+))");
  ASSERT_NE(div_a, ~uint64_t{0}) << r.output;
  EXPECT_NEAR(static_cast<double>(div_a), 2400, 20);

  std::vector<KernelLine> a = ParseTrace(dir_ / "a.jsonl");
  std::vector<KernelLine> b = ParseTrace(dir_ / "b.jsonl");
  ASSERT_EQ(a.size(), 4000u);
  EXPECT_NEAR(static_cast<double>(b.size()), 4000, 200);

  std::set<std::string> b_hashes;
  for (const KernelLine& k : b) b_hashes.insert(k.out_hashes.begin(), k.out_hashes.end());
  size_t before = 0, before_equal = 0, after = 0, after_equal = 0;
  for (const KernelLine& k : a) {
    for (const std::string& h : k.out_hashes) {
      const bool equal = b_hashes.count(h) > 0;
      if (k.seq < div_a) { ++before; before_equal += equal; }
      if (k.seq > div_a) { ++after; after_equal += equal; }
    }
  }
  ASSERT_GT(before, 1000u);
  ASSERT_GT(after, 500u);
  // Noise and the fused kernel account for the few unequal ones before.
  EXPECT_GT(before_equal, before * 85 / 100);
  EXPECT_EQ(after_equal, 0u);

  // B renames Triton counters and swaps GEMMs: some names only B has.
  std::set<std::string> a_names;
  for (const KernelLine& k : a) a_names.insert(k.name);
  size_t b_only = 0, triton_b_only = 0;
  for (const KernelLine& k : b) {
    if (a_names.count(k.name) == 0) {
      ++b_only;
      triton_b_only += k.name.starts_with("triton_");
    }
  }
  EXPECT_GT(b_only, 0u);
  EXPECT_GT(triton_b_only, 0u);
}

TEST_F(MakeTracePairTest, SameSeedSameBytesOtherSeedOtherValues) {
  ASSERT_EQ(RunTool("--kernels 500 --seed 9 " + Pair("a1", "b1")).exit_code, 0);
  ASSERT_EQ(RunTool("--kernels 500 --seed 9 " + Pair("a2", "b2")).exit_code, 0);
  ASSERT_EQ(RunTool("--kernels 500 --seed 10 " + Pair("a3", "b3")).exit_code, 0);
  EXPECT_EQ(ReadFileText(dir_ / "a1"), ReadFileText(dir_ / "a2"));
  EXPECT_EQ(ReadFileText(dir_ / "b1"), ReadFileText(dir_ / "b2"));
  EXPECT_NE(ReadFileText(dir_ / "a1"), ReadFileText(dir_ / "a3"));
}

TEST_F(MakeTracePairTest, DivergeAtAndStepLenAreHonoured) {
  RunResult r =
      RunTool("--kernels 300 --step-len 100 --diverge-at 150 --no-nan " + Pair("a", "b"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GE(Captured(r.output, R"(planted divergence: A seq (\d+))"), 150u);
  EXPECT_LE(Captured(r.output, R"(planted divergence: A seq (\d+))"), 160u);
  EXPECT_THAT(r.output, testing::Not(testing::HasSubstr("first NaN")));
  EXPECT_EQ(ParseTrace(dir_ / "a").size(), 300u);
}

TEST_F(MakeTracePairTest, WritesDebugModeLogs) {
  RunResult r = RunTool("--format debugmode --kernels 1500 " + Pair("a.log", "b.log"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"a.log", "b.log"}) {
    SCOPED_TRACE(f);
    std::ifstream in(dir_ / f);
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    const uint64_t total = Captured(line, R"(Total captured activations: (\d+))");
    const std::regex key(R"(\[layers\.\d+(\.[a-z_0-9.]+)?/op_\d+_[a-z_]+\])");
    uint64_t blocks = 0, l2 = 0, hashes = 0;
    while (std::getline(in, line)) {
      if (line.starts_with("[")) {
        EXPECT_TRUE(std::regex_match(line, key)) << line;
        ++blocks;
      }
      l2 += line.starts_with("  L2 norm:");
      hashes += line.starts_with("  Output hash:");
    }
    EXPECT_EQ(blocks, total);
    EXPECT_EQ(l2, blocks);
    EXPECT_EQ(hashes, blocks);
    if (std::string(f) == "a.log") {
      EXPECT_EQ(blocks, 1500u);
    }
  }
}

TEST_F(MakeTracePairTest, UnwritablePathFailsWithAMessageNamingIt) {
  RunResult r = RunTool("--kernels 10 --out-a /nonexistent/dir/a --out-b " + (dir_ / "b").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, testing::HasSubstr("/nonexistent/dir/a"));
}

TEST_F(MakeTracePairTest, MissingNamesDirFailsWithAMessageNamingIt) {
  RunResult r = RunTool("--kernels 10 --names-dir /nonexistent/names " + Pair("a", "b"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, testing::HasSubstr("/nonexistent/names"));
}

}  // namespace
