#include "common/format/jsonl_writer.h"
#include "common/text/utf8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace numtrace {
namespace {

TEST(JsonlWriterTest, DoublesAreShortestRoundTrip) {
  for (double v : {0.1, 1.0 / 3.0, -6.15625, 1e-310, 1.7976931348623157e308, 643.211}) {
    std::string s;
    AppendJsonDouble(v, &s);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  std::string s;
  AppendJsonDouble(0.1, &s);
  EXPECT_EQ(s, "0.1");
}

TEST(JsonlWriterTest, NonFiniteNeverWrittenAsNumber) {
  std::string s;
  AppendJsonDouble(std::nan(""), &s);
  EXPECT_EQ(s, "null");
}

TEST(JsonlWriterTest, StringsAreEscaped) {
  std::string s;
  AppendJsonString("a\"b\\c\n<T>\x01", &s);
  EXPECT_EQ(s, R"j("a\"b\\c\n<T>\u0001")j");
  s.clear();
  AppendJsonString("\xff", &s);  // not UTF-8: escaped, line stays valid
  EXPECT_EQ(s, R"j("\u00ff")j");
  s.clear();
  AppendJsonString("\xc3\xa9", &s);  // valid UTF-8 kept as is
  EXPECT_EQ(s, "\"\xc3\xa9\"");
}

// argv's bytes (hostile round 4, finding 14): an argument with byte 0xFF was
// written \u00ff, read back as U+00FF, and a printed command passed 'ÿ'.
TEST(JsonlWriterTest, AnyBytesRoundTripThroughTheArgvEscape) {
  std::string every;
  for (int b = 0; b < 256; ++b) every.push_back(static_cast<char>(b));
  // Valid UTF-8 as it is, the escape's own range, a cut sequence.
  for (std::string bytes : {every, std::string("caf\xc3\xa9 \xe2\x82\xac"), std::string("\xee\xbe\x80\xee\xbf\xbf"),
                            std::string("\xff\xfe end"), std::string("\xe2\x82")}) {
    const std::string text = Utf8FromBytes(bytes);
    EXPECT_EQ(BytesFromUtf8(text), bytes);
    std::string json;
    AppendJsonString(text, &json);
    // Valid UTF-8: no byte is escaped as a Latin-1 \u0080..\u00ff (controls stay \u0000..\u001f).
    for (size_t at = json.find("\\u00"); at != std::string::npos; at = json.find("\\u00", at + 1)) {
      EXPECT_TRUE(json[at + 4] == '0' || json[at + 4] == '1') << json.substr(at, 6);
    }
  }
  EXPECT_EQ(Utf8FromBytes("caf\xc3\xa9"), "caf\xc3\xa9");  // valid text is left alone
  EXPECT_EQ(Utf8FromBytes("a\xff"), "a\xee\xbf\xbf");       // U+EFFF
}

TEST(JsonlWriterTest, KernelRecordMatchesSpecShape) {
  KernelRecord k;
  k.seq = 41;
  k.launch = 90317;
  k.step = 2;
  k.name = "_Z3addPf";
  k.demangled = "add(float*)";
  k.stream = 7;
  k.grid = {{1024, 1, 1}};
  k.block = {{128, 1, 1}};
  BufferRecord b;
  b.arg = 1;
  b.addr = 0x7f3a40000000;
  b.bytes = 16;
  b.dtype = DType::kBF16;
  b.dtype_from = DTypeSource::kName;
  b.role = Role::kOut;
  b.stats.n = 8;
  b.stats.has_range = true;
  b.stats.min = -6.15625;
  b.stats.max = 7.03125;
  b.stats.hash = 0x9f3a5c0d12e4b788;
  k.buffers.push_back(b);
  std::string line;
  AppendJsonLine(k, &line);
  EXPECT_EQ(line,
            R"j({"type":"kernel","seq":41,"launch":90317,"step":2,"name":"_Z3addPf",)j"
            R"j("demangled":"add(float*)","stream":7,"grid":[1024,1,1],"block":[128,1,1],)j"
            R"j("buffers":[{"arg":1,"addr":"0x7f3a40000000","offset":0,"bytes":16,"dtype":"bf16",)j"
            R"j("dtype_from":"name","role":"out","stats":{"n":8,"nan":0,"inf":0,"ninf":0,)j"
            R"j("zero":0,"sub":0,"min":-6.15625,"max":7.03125,"sum":0,"l1":0,"l2":0,)j"
            R"j("hash":"9f3a5c0d12e4b788"}}]})j"
            "\n");
}

TEST(JsonlWriterTest, RawBuffersCarryOnlyCountAndHash) {
  KernelRecord k;
  BufferRecord b;
  b.dtype = DType::kRaw;
  b.stats.n = 3;
  b.stats.hash = 1;
  k.buffers.push_back(b);
  std::string line;
  AppendJsonLine(k, &line);
  EXPECT_NE(line.find(R"j("stats":{"n":3,"hash":"0000000000000001"})j"), std::string::npos) << line;
}

TEST(JsonlWriterTest, FooterAndHeader) {
  std::string s;
  TraceHeader h;
  h.producer = "libnumtrace 0.1.0";
  AppendJsonLine(h, &s);
  EXPECT_EQ(s, R"j({"type":"header","format":"numtrace-trace","version":1,"producer":"libnumtrace 0.1.0"})j"
               "\n");
  s.clear();
  FooterRecord f;
  f.kernels = 3;
  f.launches = 10;
  f.end_time = "2026-11-29T11:00:00Z";
  AppendJsonLine(f, &s);
  EXPECT_EQ(s, R"j({"type":"footer","kernels":3,"launches":10,"dropped":0,"unmeasured":0,"status":"complete","end_time":"2026-11-29T11:00:00Z"})j"
               "\n");
}

TEST(JsonlWriterTest, FooterCountersAndMachineReadableNote) {
  std::string s;
  FooterRecord f;
  f.kernels = 2;
  f.unmeasured = 7;
  f.counters = {{"launches_seen", 40}, {"no_layout", 1}};
  AppendJsonLine(f, &s);
  EXPECT_EQ(s, R"j({"type":"footer","kernels":2,"launches":0,"dropped":0,"unmeasured":7,"counters":{"launches_seen":40,"no_layout":1},"status":"complete","end_time":""})j"
               "\n");
  s.clear();
  NoteRecord n;
  n.msg = "kernel ran unmeasured";
  n.kind = "unmeasured";
  n.name = "nccl\"Kernel";
  n.count = 3;
  AppendJsonLine(n, &s);
  EXPECT_EQ(s, R"j({"type":"note","level":"warn","msg":"kernel ran unmeasured","kind":"unmeasured","name":"nccl\"Kernel","count":3})j"
               "\n");
}

}  // namespace
}  // namespace numtrace
