// File: test/analyzer/cli/debugmode_json_test.cc
//
// numtrace-diff on DebugMode JSON logs written by the real torch
// (DebugMode.save_logs; test/data/debugmode-json, made by
// test/scripts/torch/make_debugmode_json.py): one training step of a small
// attention block with module boundaries, norm and hash_tensor per op and
// input, and a Triton kernel record. Same -> identical; a planted constant
// and a planted mask -> diverged at the op and module planted; one more layer
// -> a report of where the streams part; a later version -> one line, exit 2;
// a bad record -> counted and named, the rest read.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "absl/strings/str_replace.h"
#include "analyzer/align/aligner.h"
#include "analyzer/cli/diff_command.h"
#include "analyzer/judge/judge.h"
#include "analyzer/read/importer.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/report/terminal_summary.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

std::string JsonPath(const std::string& name) {
  return std::string(NUMTRACE_TEST_DATA_DIR) + "/debugmode-json/" + name + ".json.gz";
}

Trace ReadJson(const std::string& name) {
  absl::StatusOr<Trace> t = ReadTrace(JsonPath(name));  // sniffed by content, gzip or not
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace{};
}

// The decompressed text of a log.
std::string JsonText(const std::string& name) {
  absl::StatusOr<std::unique_ptr<LineReader>> r = LineReader::Open(JsonPath(name));
  EXPECT_TRUE(r.ok()) << r.status();
  std::string text;
  EXPECT_TRUE((*r)->ReadRest(&text).ok());
  return text;
}

struct DiffRun {
  int exit = -1;
  std::string out, err;
};

DiffRun RunJsonDiff(const std::string& a, const std::string& b) {
  DiffCommandOptions opt;
  opt.a = a;
  opt.b = b;
  std::ostringstream out, err;
  DiffRun r;
  r.exit = RunDiffCommand(opt, out, err, false);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(DebugModeJson, ReadsOpsModulesHashesAndTheTritonKernel) {
  Trace t = ReadJson("base");
  EXPECT_EQ(t.kind, "DebugMode JSON log");
  EXPECT_EQ(t.label, "base");
  EXPECT_FALSE(t.records_environment);
  EXPECT_EQ(t.flow, FlowKey::kHashChain);
  // 263 records: 11 modules entered and the optimizer's step (annotations,
  // read as scope and phase), 250 ops, 1 kernel.
  EXPECT_EQ(t.kernels.size(), 251u);
  EXPECT_EQ(t.SkippedCount("record_without_values"), 0u);
  EXPECT_EQ(t.SkippedCount("bad_record"), 0u);
  size_t ops = 0, scoped = 0, optimizer = 0;
  for (const Kernel& k : t.kernels) {
    ops += k.level == RecordLevel::kOp;
    scoped += t.Scope(k).has_value();
    optimizer += t.PhaseOf(k) == Phase::kOptimizer;
  }
  EXPECT_EQ(ops, 250u);
  EXPECT_EQ(scoped, 23u);      // the forward ops, inside their modules
  EXPECT_GT(optimizer, 100u);  // AdamW's foreach ops
  // The first op: layers.0.norm's layer norm, its output f32[6, 8] with a
  // norm (17 digits) and a hash_tensor, its input with the same.
  const Kernel& first = t.kernels[0];
  EXPECT_EQ(t.Name(first), "layers.0.norm/aten::native_layer_norm");
  EXPECT_EQ(t.Scope(first), "layers.0.norm");
  EXPECT_EQ(t.Op(first), "aten::native_layer_norm");
  const Buffer& out = t.BuffersOf(first)[0];
  EXPECT_EQ(out.role, Role::kOut);
  EXPECT_EQ(out.dtype, DType::kF32);
  EXPECT_EQ(out.stats.n, 48u);
  EXPECT_EQ(out.fingerprint, kPrintedStats | kHashTensor);
  EXPECT_EQ(t.printed[first.first_buffer].digits, 17);
  // The Triton kernel: in_ptr0 only read, out_ptr0 written.
  const Kernel& triton = t.kernels.back();
  EXPECT_EQ(triton.level, RecordLevel::kKernel);
  EXPECT_EQ(t.Name(triton), "triton_poi_fused_mul_0");
  ASSERT_EQ(triton.buffer_count, 2u);
  EXPECT_EQ(t.BuffersOf(triton)[0].role, Role::kIn);
  EXPECT_EQ(t.BuffersOf(triton)[1].role, Role::kOut);
  EXPECT_EQ(t.BuffersOf(triton)[1].stats.n, 8u);
}

TEST(DebugModeJson, SameRunIsIdenticalExitZero) {
  const DiffRun r = RunJsonDiff(JsonPath("base"), JsonPath("same"));
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("numtrace-diff: identical"), std::string::npos) << r.out;
}

TEST(DebugModeJson, PlantedConstantDivergesAtItsOpInItsModule) {
  const DiffRun r = RunJsonDiff(JsonPath("base"), JsonPath("constant"));
  EXPECT_EQ(r.exit, 1) << r.err;
  // The scale 1/sqrt(d) * 1.01 multiplies q @ k^T in layers.0.attn.
  EXPECT_NE(r.out.find("the divergence beyond tolerance starts at layers.0.attn/aten::mul.Tensor in "
                       "layers.0.attn (aten::mul, forward) (cause origin"),
            std::string::npos)
      << r.out;
}

TEST(DebugModeJson, PlantedMaskDivergesAtTheMask) {
  Trace a = ReadJson("base"), b = ReadJson("mask");
  const DiffResult r = Judge(a, b, Align(a, b));
  ASSERT_TRUE(r.roots.first.has_value());
  const Kernel& k = a.kernels[r.alignment.pairs[*r.roots.first].a];
  EXPECT_EQ(a.Name(k), "layers.0.attn/aten::triu");
  EXPECT_EQ(r.verdicts[*r.roots.first].cause, Cause::kOrigin);
  // Everything before it in the step is bitwise equal.
  ASSERT_TRUE(r.first_divergence.has_value());
  EXPECT_EQ(*r.first_divergence, *r.roots.first);
}

TEST(DebugModeJson, DifferentLengthsSayWhereTheStreamsPart) {
  const DiffRun r = RunJsonDiff(JsonPath("base"), JsonPath("longer"));
  EXPECT_EQ(r.exit, 1) << r.err;
  EXPECT_NE(r.out.find("unmatched: 0 only in A, 210 only in B"), std::string::npos) << r.out;
  // B's extra layer starts right after layers.0's last forward op.
  EXPECT_NE(r.out.find("the runs part at B#21 layers.1.norm/aten::native_layer_norm: 21 consecutive records "
                       "only in B (210 in all), after the pair A#20 layers.0/aten::add.Tensor | B#20"),
            std::string::npos)
      << r.out;
  // The layers before it pair and are equal; the head after it is not.
  EXPECT_NE(r.out.find("in head (aten::addmm, forward)"), std::string::npos) << r.out;
}

TEST(DebugModeJson, ALaterVersionIsOneLineExitTwo) {
  const std::string dir = testing::FreshTestDir("debugmode-json-version").string();
  std::string text = JsonText("base");
  text = absl::StrReplaceAll(text, {{"\"version\": 1,", "\"version\": 2,"}});
  testing::WriteFileText(dir + "/v2.json", text);
  const DiffRun r = RunJsonDiff(dir + "/v2.json", JsonPath("base"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.err, "numtrace-diff: " + dir + "/v2.json: DebugMode JSON log version 2: this numtrace reads version 1\n");
}

TEST(DebugModeJson, ABadRecordIsCountedAndNamedTheRestRead) {
  const std::string dir = testing::FreshTestDir("debugmode-json-bad").string();
  std::string text = JsonText("same");
  // The first op's name becomes a number: that record alone is skipped.
  const size_t at = text.find("\"op_name\": \"aten::native_layer_norm\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string_view("\"op_name\": \"aten::native_layer_norm\"").size(), "\"op_name\": 7");
  testing::WriteFileText(dir + "/bad.json", text);
  absl::StatusOr<Trace> t = ReadTrace(dir + "/bad.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->SkippedCount("bad_record"), 1u);
  EXPECT_EQ(t->kernels.size(), 250u);
  const DiffRun r = RunJsonDiff(JsonPath("base"), dir + "/bad.json");
  EXPECT_NE(r.out.find("bad.json: 1 records skipped, bad_record: records with a missing or mistyped field"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 only in A"), std::string::npos) << r.out;
}

TEST(DebugModeJson, SniffedByContentBeforeNumtracesJsonLines) {
  const std::string head = JsonText("base").substr(0, 200);
  EXPECT_EQ(ImporterForContent(head), FindImporter("debugmode-json"));
  EXPECT_EQ(ImporterForContent("{\"type\": \"header\", \"format\": \"numtrace-trace\"}"), FindImporter("numtrace"));
  // Cut short: one line naming the file, never a crash.
  const std::string dir = testing::FreshTestDir("debugmode-json-cut").string();
  testing::WriteFileText(dir + "/cut.json", JsonText("base").substr(0, 5000));
  absl::StatusOr<Trace> t = ReadTrace(dir + "/cut.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("cut.json: not a complete DebugMode JSON log"), std::string::npos)
      << t.status();
}

}  // namespace
}  // namespace numtrace::analyzer
