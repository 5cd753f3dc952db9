#include "analyzer/read/trace_reader.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "test/analyzer/read/trace_text.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

using testing::MakeHeader;
using testing::MakeKernel;
using testing::MakeKernels;
using testing::TraceText;

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

void ExpectStatsEqual(const BufferStats& want, const BufferStats& got, DType dtype) {
  EXPECT_EQ(got.n, want.n);
  EXPECT_EQ(got.hash, want.hash);
  if (dtype == DType::kRaw) return;  // only n and hash are written
  EXPECT_EQ(got.nan, want.nan);
  EXPECT_EQ(got.inf, want.inf);
  EXPECT_EQ(got.ninf, want.ninf);
  EXPECT_EQ(got.zero, want.zero);
  EXPECT_EQ(got.sub, want.sub);
  EXPECT_EQ(got.has_range, want.has_range);
  if (want.has_range) {
    EXPECT_EQ(Bits(got.min), Bits(want.min));
    EXPECT_EQ(Bits(got.max), Bits(want.max));
  }
  EXPECT_EQ(Bits(got.sum), Bits(want.sum));
  EXPECT_EQ(Bits(got.l1), Bits(want.l1));
  EXPECT_EQ(Bits(got.l2), Bits(want.l2));
}

// The header's environment and every later `environment` record, merged:
// a later value of a key replaces the earlier one (docs/format.md).
TEST(TraceReaderTest, EnvironmentRecordsMergeIntoTheHeaders) {
  TraceHeader h = MakeHeader();
  h.environment = {{"gpu.name", "NVIDIA H200"}, {"torch.float32_matmul_precision", "highest"}};
  std::string text;
  AppendJsonLine(h, &text);
  AppendJsonLine(MakeKernel(0), &text);
  AppendJsonLine(EnvironmentRecord{{{"torch.float32_matmul_precision", "high"}, {"torch.version", "2.9.0"}}}, &text);
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "a.ntrace.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EnvironmentValues want = {{"gpu.name", "NVIDIA H200"}, {"torch.float32_matmul_precision", "high"},
                            {"torch.version", "2.9.0"}};
  EXPECT_EQ(t->header.environment, want);
  EXPECT_EQ(t->SkippedCount("unknown_record_type"), 0u);
  // A value that is not a string: one line naming the key and where.
  std::string bad = text + "{\"type\":\"environment\",\"values\":{\"gpu.sm_count\":132}}\n";
  absl::StatusOr<Trace> b = ReadTraceBytes(bad, "b.ntrace.jsonl", FindImporter("numtrace"));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("values.gpu.sm_count"), std::string::npos) << b.status();
  EXPECT_NE(b.status().message().find("b.ntrace.jsonl:4"), std::string::npos) << b.status();
}

TEST(TraceReaderTest, RoundTripsEveryFieldBitExact) {
  std::vector<KernelRecord> kernels = MakeKernels(3);
  // Awkward values: doubles that need all 17 digits, extremes, a
  // subnormal, negative zero; hashes and addresses using all 64 bits.
  BufferRecord& b0 = kernels[0].buffers[0];
  b0.stats.sum = 0.1 + 0.2;
  b0.stats.l1 = std::numeric_limits<double>::max();
  b0.stats.l2 = std::numeric_limits<double>::denorm_min();
  b0.stats.min = -0.0;
  b0.stats.max = 1e-310;
  b0.stats.hash = ~uint64_t{0};
  b0.addr = ~uint64_t{0};
  BufferRecord raw;
  raw.arg = 4;
  raw.addr = 0;
  raw.bytes = 12;
  raw.dtype = DType::kRaw;
  raw.role = Role::kUnknown;
  raw.stats.n = 12;
  raw.stats.hash = 0;
  raw.pre = raw.stats;
  raw.pre->hash = 0x0123456789abcdef;  // differs from the stats after
  kernels[1].buffers.push_back(raw);
  BufferRecord in = kernels[1].buffers[0];
  in.arg = 2;
  in.role = Role::kIn;
  in.dtype = DType::kF8E4M3;
  in.dtype_from = DTypeSource::kSniffed;
  in.stats.has_range = false;
  in.stats.nan = 3;
  in.stats.inf = 1;
  in.stats.ninf = 2;
  in.stats.sub = 5;
  kernels[1].buffers.push_back(in);
  kernels[2].buffers.clear();  // MUST field, may be empty
  kernels[2].demangled.clear();
  kernels[2].launch.reset();
  kernels[2].step.reset();
  kernels[2].stream.reset();
  kernels[2].grid.reset();
  kernels[2].block.reset();
  kernels[2].graph = 9;

  absl::StatusOr<Trace> t = ReadTraceBytes(TraceText(kernels), "runA/rank_5.ntrace.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated);
  EXPECT_EQ(t->label, "A");
  EXPECT_EQ(t->rank, 0);  // from the header, not the file name
  EXPECT_EQ(t->kind, "numtrace trace");
  EXPECT_EQ(t->path, "runA/rank_5.ntrace.jsonl");
  ASSERT_TRUE(t->footer.has_value());
  EXPECT_EQ(t->footer->kernels, 3u);
  EXPECT_EQ(t->footer->launches, 8u);
  EXPECT_EQ(t->footer->dropped, 1u);
  EXPECT_EQ(t->footer->status, "complete");
  EXPECT_EQ(t->footer->end_time, "2026-11-29T11:05:00Z");
  EXPECT_EQ(t->footer->unmeasured, 0u);
  EXPECT_TRUE(t->footer->counters.empty());

  const TraceHeader want_h = MakeHeader();
  EXPECT_EQ(t->header.producer, want_h.producer);
  ASSERT_TRUE(t->header.run && t->header.device && t->header.capture);
  EXPECT_EQ(t->header.run->argv, want_h.run->argv);
  EXPECT_EQ(t->header.run->pid, 4242);
  EXPECT_EQ(t->header.run->world_size, 8);
  EXPECT_EQ(t->header.run->host, "node7");
  EXPECT_EQ(t->header.run->start_time, want_h.run->start_time);
  EXPECT_EQ(t->header.device->name, "NVIDIA H200");
  EXPECT_EQ(t->header.device->cc, "9.0");
  EXPECT_EQ(t->header.device->driver, "580.159");
  EXPECT_EQ(t->header.device->cuda, "13.0");
  EXPECT_EQ(t->header.capture->steps, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->header.capture->outputs, "changed");
  EXPECT_EQ(t->header.capture->selector, "all kernels");
  EXPECT_EQ(t->header.capture->settings,
            (std::vector<std::pair<std::string, std::string>>{{"NUMTRACE_STEPS", "2-3"}, {"NUMTRACE_KERNEL", "a\"b;c"}}));

  ASSERT_EQ(t->kernels.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    SCOPED_TRACE(i);
    const KernelRecord& want = kernels[i];
    const Kernel& got = t->kernels[i];
    EXPECT_EQ(got.seq, want.seq);
    EXPECT_EQ(got.launch, want.launch.value_or(kNoValue));
    EXPECT_EQ(got.step, want.step.value_or(-1));
    EXPECT_EQ(got.stream, want.stream.value_or(kNoValue));
    EXPECT_EQ(t->Name(got), want.name);
    EXPECT_EQ(t->Demangled(got), want.demangled.empty() ? want.name : want.demangled);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(got.grid[d], want.grid ? (*want.grid)[d] : 0u);
      EXPECT_EQ(got.block[d], want.block ? (*want.block)[d] : 0u);
    }
    auto buffers = t->BuffersOf(got);
    ASSERT_EQ(buffers.size(), want.buffers.size());
    for (size_t j = 0; j < buffers.size(); ++j) {
      SCOPED_TRACE(j);
      const BufferRecord& wb = want.buffers[j];
      const Buffer& gb = buffers[j];
      EXPECT_EQ(gb.arg, wb.arg);
      EXPECT_EQ(gb.addr, wb.addr);
      EXPECT_EQ(gb.offset, wb.offset);
      EXPECT_EQ(gb.bytes, wb.bytes);
      EXPECT_EQ(gb.dtype, wb.dtype);
      EXPECT_EQ(gb.dtype_from, wb.dtype_from);
      EXPECT_EQ(gb.role, wb.role);
      ExpectStatsEqual(wb.stats, gb.stats, wb.dtype);
      EXPECT_EQ(gb.has_pre, wb.pre.has_value());  // `pre` keeps its hash: an input of the launch
      if (wb.pre) EXPECT_EQ(gb.pre_hash, wb.pre->hash);
    }
  }
  // Names are interned once: all three kernels share one mangled name.
  EXPECT_EQ(t->kernels[0].name, t->kernels[2].name);
  EXPECT_EQ(t->kernels[2].demangled, t->kernels[2].name);
}

TEST(TraceReaderTest, NullStatReadsAsNaN) {
  std::vector<KernelRecord> kernels = MakeKernels(1);
  kernels[0].buffers[0].stats.sum = std::nan("");  // the writer emits null
  absl::StatusOr<Trace> t = ReadTraceBytes(TraceText(kernels), "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(std::isnan(t->buffers[0].stats.sum));
}

TEST(TraceReaderTest, NoFooterMeansTruncated) {
  absl::StatusOr<Trace> t = ReadTraceBytes(TraceText(MakeKernels(4), /*footer=*/false), "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->truncated);
  EXPECT_FALSE(t->footer.has_value());
  EXPECT_EQ(t->kernels.size(), 4u);
}

TEST(TraceReaderTest, CutMidLineKeepsEveryCompleteLine) {
  std::string text = TraceText(MakeKernels(5), /*footer=*/false);
  // Cut the last kernel line in several places, including inside a string,
  // a number and right after its opening brace.
  size_t last_line = text.rfind('\n', text.size() - 2) + 1;
  for (size_t cut : {last_line + 1, last_line + 30, last_line + 200, text.size() - 3}) {
    SCOPED_TRACE(cut);
    absl::StatusOr<Trace> t = ReadTraceBytes(text.substr(0, cut), "t.jsonl", FindImporter("numtrace"));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->truncated);
    EXPECT_EQ(t->kernels.size(), 4u);
    EXPECT_EQ(t->buffers.size(), 4u);  // the partial kernel's buffers are dropped too
  }
}

TEST(TraceReaderTest, CompleteLastLineWithoutNewlineIsKept) {
  std::string text = TraceText(MakeKernels(2));
  text.pop_back();  // drop the footer's '\n'
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated);
  EXPECT_EQ(t->kernels.size(), 2u);
}

TEST(TraceReaderTest, UnknownFieldsAndTypesAreIgnored) {
  std::string text = TraceText(MakeKernels(2));
  // An unknown record type, an unknown field at each level, CRLF and a
  // blank line.
  size_t second = text.find('\n') + 1;
  text.insert(second,
              "{\"type\":\"gpu_clock\",\"mhz\":1980,\"nested\":{\"a\":[1,2]}}\r\n\n"
              "{\"type\":\"note\",\"launch\":12,\"level\":\"info\",\"msg\":\"graphs not expanded\","
              "\"extra\":true}\n");
  size_t pos = text.find("\"seq\":1");
  text.insert(pos, "\"future\":{\"x\":[1,{\"y\":null}]},");
  pos = text.find("\"arg\":1");
  text.insert(pos, "\"fancy\":\"yes\",");
  pos = text.find("\"zero\":");
  text.insert(pos, "\"p99\":3.5,");
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->SkippedCount("unknown_record_type"), 1u);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_EQ(t->notes[0].launch, 12u);
  EXPECT_EQ(t->notes[0].level, "info");
  EXPECT_EQ(t->notes[0].msg, "graphs not expanded");
  ASSERT_EQ(t->kernels.size(), 2u);
  EXPECT_EQ(t->buffers[0].stats.zero, 17u);
  EXPECT_EQ(t->buffers[0].arg, 1u);
}

TEST(TraceReaderTest, TypeNeedNotComeFirst) {
  std::string text = TraceText(MakeKernels(1));
  size_t pos = text.find("{\"type\":\"kernel\",");
  text.replace(pos, 17, "{");
  size_t close = text.find("]}\n", pos);
  text.insert(close + 1, ",\"type\":\"kernel\"");
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 1u);
}

TEST(TraceReaderTest, LabelAndRankFallBackToTheFileName) {
  TraceHeader h;
  h.producer = "p";  // no run object
  absl::StatusOr<Trace> t = ReadTraceBytes(TraceText(MakeKernels(1), true, h),
                                            "out/rank_12.pid77.ntrace.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->rank, 12);
  EXPECT_EQ(t->label, "rank_12.pid77");
}

TEST(TraceReaderTest, FileEndingOnAPageBoundaryIsPadded) {
  // The mapped file ends exactly at a page boundary, cut mid-line: simdjson
  // must find its padding in the zeroed pages after the file.
  std::string text = TraceText(MakeKernels(40), /*footer=*/false);
  ASSERT_GT(text.size(), 16384u);
  std::string path = std::string(NUMTRACE_BINARY_DIR) + "/trace_reader_test_page.ntrace.jsonl";
  {
    std::ofstream out(path, std::ios::binary);
    out << text.substr(0, 16384);
  }
  absl::StatusOr<Trace> t = ReadTrace(path, FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->truncated);
  size_t complete_lines = 0;
  for (size_t i = 0; i < 16384; ++i) complete_lines += text[i] == '\n';
  EXPECT_EQ(t->kernels.size(), complete_lines - 1);  // minus the header
  std::remove(path.c_str());
}

TEST(TraceReaderTest, ReadsAFileAndNamesAMissingOne) {
  std::string path = std::string(NUMTRACE_BINARY_DIR) + "/trace_reader_test_rank_3.ntrace.jsonl";
  {
    std::ofstream out(path, std::ios::binary);
    out << TraceText(MakeKernels(3));
  }
  absl::StatusOr<Trace> t = ReadTrace(path, FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels.size(), 3u);
  std::remove(path.c_str());

  absl::StatusOr<Trace> missing = ReadTrace("/nonexistent/rank_0.ntrace.jsonl", FindImporter("numtrace"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/rank_0.ntrace.jsonl"), std::string::npos);
}

TEST(TraceReaderTest, ReadsFooterCountersAndMachineReadableNotes) {
  std::string text = TraceText(MakeKernels(2), /*footer=*/false);
  NoteRecord n;
  n.msg = "ran unmeasured";
  n.kind = "unmeasured";
  n.name = "ncclDevKernel_AllReduce";
  n.count = 4;
  AppendJsonLine(n, &text);
  FooterRecord f;
  f.kernels = 2;
  f.unmeasured = 4;
  f.counters = {{"launches_seen", 11}, {"pack_failed", 2}};
  AppendJsonLine(f, &text);
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "rank_0.ntrace.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->footer.has_value());
  EXPECT_EQ(t->footer->unmeasured, 4u);
  EXPECT_EQ(t->footer->counters, f.counters);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_EQ(t->notes[0].kind, "unmeasured");
  EXPECT_EQ(t->notes[0].name, "ncclDevKernel_AllReduce");
  EXPECT_EQ(t->notes[0].count, std::optional<uint64_t>(4));
}

}  // namespace
}  // namespace numtrace::analyzer

namespace numtrace::analyzer {
namespace {

// Issue 24: the operator-level fields the shim writes (one definition in
// common/format) read back: capture.level, a record's level, shape, device.
TEST(TraceReaderOpLevelTest, LevelShapeAndDeviceRoundTrip) {
  std::vector<KernelRecord> kernels = testing::MakeKernels(2);
  kernels[0].op_level = true;
  kernels[0].name = "aten::addmm";
  kernels[0].buffers.push_back(kernels[0].buffers.at(0));
  kernels[0].buffers[1].arg = 1;
  for (BufferRecord& b : kernels[0].buffers) {
    b.shape = std::vector<int64_t>{2, 3};
    b.device = "cpu";
  }
  kernels[0].buffers[0].shape = std::vector<int64_t>{};  // a 0-d tensor
  TraceHeader header = testing::MakeHeader();
  header.capture.emplace().level = CaptureLevel::kOps;
  absl::StatusOr<Trace> t = ReadTraceBytes(testing::TraceText(kernels, true, header), "ops.jsonl");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->header.capture && t->header.capture->level);
  EXPECT_EQ(*t->header.capture->level, CaptureLevel::kOps);
  EXPECT_EQ(t->kernels[0].level, RecordLevel::kOp);
  EXPECT_EQ(t->kernels[1].level, RecordLevel::kKernel);
  const auto b0 = t->BuffersOf(t->kernels[0]);
  ASSERT_GE(b0.size(), 2u);
  EXPECT_EQ(t->strings.View(b0[0].shape), "[]");
  EXPECT_EQ(t->strings.View(b0[1].shape), "[2,3]");
  EXPECT_EQ(t->strings.View(b0[1].device), "cpu");
  EXPECT_EQ(t->BuffersOf(t->kernels[1])[0].shape, kNoString);

  // A level word from a later version is unknown, not an error; a bad shape is one error naming it.
  std::string text = testing::TraceText(kernels, true, header);
  text.replace(text.find("\"level\":\"ops\""), 13, "\"level\":\"xyz\"");
  absl::StatusOr<Trace> later = ReadTraceBytes(text, "later.jsonl");
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_FALSE(later->header.capture->level.has_value());
  std::string bad = testing::TraceText(kernels, true, header);
  bad.replace(bad.find("\"shape\":[2,3]"), 13, "\"shape\":[2,\"x\"]");
  absl::StatusOr<Trace> e = ReadTraceBytes(bad, "bad.jsonl");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("shape"), std::string_view::npos) << e.status();
}

TEST(TraceReaderProvenanceTest, ScopeOpPhaseRoundTripAndBadValuesAreContained) {
  std::vector<KernelRecord> kernels = testing::MakeKernels(4);
  kernels[0].scope = "layers.1.fc";
  kernels[0].op = "aten::addmm";
  kernels[0].phase = Phase::kForward;
  kernels[1].scope = "";  // the root module
  kernels[1].phase = Phase::kOptimizer;
  kernels[2].scope = std::string(100000, 's');  // a runaway name
  // kernels[3]: none
  std::string text = testing::TraceText(kernels);
  // A phase word from a later version is read as unknown, not an error.
  const size_t at = text.find("\"phase\":\"optimizer\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 19, "\"phase\":\"sideways\"");
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Scope(t->kernels[0]), "layers.1.fc");
  EXPECT_EQ(t->Op(t->kernels[0]), "aten::addmm");
  EXPECT_EQ(t->PhaseOf(t->kernels[0]), Phase::kForward);
  EXPECT_EQ(t->Scope(t->kernels[1]), "");
  EXPECT_EQ(t->PhaseOf(t->kernels[1]), Phase::kNone);
  // ...and said once, in a note (hostile round 4, finding 12: it was silent).
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_EQ(t->notes[0].msg, "a kernel record's phase 'sideways' is not a phase numtrace knows: read as none");
  EXPECT_EQ(t->Scope(t->kernels[2])->size(), kProvenanceMaxBytes);
  EXPECT_FALSE(t->Scope(t->kernels[3]).has_value());
  EXPECT_FALSE(t->Op(t->kernels[3]).has_value());

  // A trace without provenance keeps no provenance table at all.
  absl::StatusOr<Trace> plain = ReadTraceBytes(testing::TraceText(testing::MakeKernels(3)), "p.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->provenance.empty());

  // A scope that is not a string: one error naming the field and the line.
  std::string bad = testing::TraceText(testing::MakeKernels(2));
  bad.insert(bad.find("\"seq\":1"), "\"scope\":7,");
  absl::StatusOr<Trace> e = ReadTraceBytes(bad, "bad.jsonl", FindImporter("numtrace"));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("scope"), std::string_view::npos) << e.status();
  EXPECT_NE(e.status().message().find("bad.jsonl:3"), std::string_view::npos) << e.status();
}

TEST(TraceReaderProvenanceTest, SrcIsReadCappedAndKeptBesideTheKernels) {
  std::vector<KernelRecord> kernels = testing::MakeKernels(4);
  kernels[0].src = "train.py:42";
  kernels[1].src = std::string(100000, 'f') + ".py:1";  // a runaway name
  kernels[2].src = "bad\xff\xfe.py:7";                  // not UTF-8
  // kernels[3]: none
  absl::StatusOr<Trace> t = ReadTraceBytes(testing::TraceText(kernels), "t.jsonl", FindImporter("numtrace"));
  ASSERT_TRUE(t.ok()) << t.status();
  // Only src: still provenance (a trace whose kernels carry just src keeps it).
  ASSERT_EQ(t->provenance.size(), t->kernels.size());
  EXPECT_EQ(t->Src(t->kernels[0]), "train.py:42");
  EXPECT_FALSE(t->Scope(t->kernels[0]).has_value());
  EXPECT_EQ(t->Src(t->kernels[1])->size(), kProvenanceMaxBytes);
  ASSERT_TRUE(t->Src(t->kernels[2]).has_value());
  EXPECT_NE(t->Src(t->kernels[2])->find("bad"), std::string_view::npos);
  EXPECT_FALSE(t->Src(t->kernels[3]).has_value());

  // A src that is not a string: one error naming the field and the line.
  std::string bad = testing::TraceText(testing::MakeKernels(2));
  bad.insert(bad.find("\"seq\":1"), "\"src\":[1],");
  absl::StatusOr<Trace> e = ReadTraceBytes(bad, "bad.jsonl", FindImporter("numtrace"));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("src"), std::string_view::npos) << e.status();
  EXPECT_NE(e.status().message().find("bad.jsonl:3"), std::string_view::npos) << e.status();
}

}  // namespace
}  // namespace numtrace::analyzer
