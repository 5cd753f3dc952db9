// Malformed traces: each must fail with one line "PATH:LINE: reason" that
// names the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzer/read/trace_reader.h"
#include "test/analyzer/read/trace_text.h"

namespace numtrace::analyzer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::MakeKernels;
using testing::TraceText;

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<Trace> t = ReadTraceBytes(text, "runA/rank_0.ntrace.jsonl", FindImporter("numtrace"));
  if (t.ok()) return "OK";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  std::string msg(t.status().message());
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  return msg;
}

// The text of a 3-kernel trace with line `line` (1-based) replaced.
std::string WithLine(int line, std::string_view replacement) {
  std::string text = TraceText(MakeKernels(3));
  size_t start = 0;
  for (int i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  size_t end = text.find('\n', start);
  text.replace(start, end - start, replacement);
  return text;
}

std::string Line(int line) {
  std::string text = TraceText(MakeKernels(3));
  size_t start = 0;
  for (int i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  return text.substr(start, text.find('\n', start) - start);
}

std::string Replace(std::string s, std::string_view from, std::string_view to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(TraceReaderErrorsTest, BadJson) {
  EXPECT_THAT(ErrorOf(WithLine(3, "{\"type\":\"kernel\",\"seq\":1,")),
              StartsWith("runA/rank_0.ntrace.jsonl:3: bad JSON"));
  EXPECT_THAT(ErrorOf(WithLine(2, "[1,2]")),
              StartsWith("runA/rank_0.ntrace.jsonl:2: expected a JSON object"));
  EXPECT_THAT(ErrorOf(WithLine(2, Line(2) + " {}")),
              StartsWith("runA/rank_0.ntrace.jsonl:2: bad JSON"));
}

TEST(TraceReaderErrorsTest, ValuesQuotedInMessagesStayOnOneLine) {
  // Found by the fuzzer: a JSON "\\n" in a quoted value used to put a raw
  // newline into the message. ErrorOf checks it is one line.
  std::string msg = ErrorOf(WithLine(1, R"({"type":"header","format":"\nfoo\u0001","version":1})"));
  EXPECT_THAT(msg, StartsWith("runA/rank_0.ntrace.jsonl:1: "));
  EXPECT_THAT(msg, HasSubstr("\\nfoo\\x01"));
}

TEST(TraceReaderErrorsTest, MissingSeq) {
  EXPECT_EQ(ErrorOf(WithLine(2, Replace(Line(2), "\"seq\":0,", ""))),
            "runA/rank_0.ntrace.jsonl:2: seq: missing (MUST field)");
}

TEST(TraceReaderErrorsTest, MissingNestedMustFields) {
  EXPECT_EQ(ErrorOf(WithLine(3, Replace(Line(3), "\"dtype\":\"bf16\",", ""))),
            "runA/rank_0.ntrace.jsonl:3: buffers[0].dtype: missing (MUST field)");
  EXPECT_EQ(ErrorOf(WithLine(3, Replace(Line(3), "{\"n\":4194304,", "{"))),
            "runA/rank_0.ntrace.jsonl:3: buffers[0].stats.n: missing (MUST field)");
  EXPECT_EQ(ErrorOf(WithLine(2, Replace(Line(2), ",\"buffers\":[", ",\"bufs\":["))),
            "runA/rank_0.ntrace.jsonl:2: buffers: missing (MUST field)");
  EXPECT_EQ(ErrorOf(WithLine(2, Replace(Line(2), "{\"type\":\"kernel\",", "{"))),
            "runA/rank_0.ntrace.jsonl:2: type: missing (MUST field)");
}

TEST(TraceReaderErrorsTest, WrongDTypeName) {
  EXPECT_EQ(ErrorOf(WithLine(4, Replace(Line(4), "\"bf16\"", "\"f17\""))),
            "runA/rank_0.ntrace.jsonl:4: buffers[0].dtype: unknown dtype \"f17\"");
  EXPECT_EQ(ErrorOf(WithLine(4, Replace(Line(4), "\"role\":\"out\"", "\"role\":\"inout\""))),
            "runA/rank_0.ntrace.jsonl:4: buffers[0].role: unknown role \"inout\"");
}

TEST(TraceReaderErrorsTest, WrongTypes) {
  EXPECT_EQ(ErrorOf(WithLine(2, Replace(Line(2), "\"seq\":0", "\"seq\":\"0\""))),
            "runA/rank_0.ntrace.jsonl:2: seq: expected an unsigned integer");
  EXPECT_EQ(ErrorOf(WithLine(2, Replace(Line(2), "\"grid\":[1024,1,1]", "\"grid\":[1024,1]"))),
            "runA/rank_0.ntrace.jsonl:2: grid: expected an array of 3 unsigned integers");
  EXPECT_EQ(ErrorOf(WithLine(2, Replace(Line(2), "\"l2\":643.211", "\"l2\":\"big\""))),
            "runA/rank_0.ntrace.jsonl:2: buffers[0].stats.l2: expected a number");
  EXPECT_THAT(ErrorOf(WithLine(2, Replace(Line(2), "\"hash\":\"9f3a", "\"hash\":\"zz3a"))),
              StartsWith("runA/rank_0.ntrace.jsonl:2: buffers[0].stats.hash: expected 16 hex digits"));
  EXPECT_THAT(ErrorOf(WithLine(2, Replace(Line(2), "\"addr\":\"0x", "\"addr\":\""))),
              StartsWith("runA/rank_0.ntrace.jsonl:2: buffers[0].addr: expected \"0x<hex>\""));
  EXPECT_EQ(ErrorOf(WithLine(1, Replace(Line(1), "\"pid\":4242", "\"pid\":\"x\""))),
            "runA/rank_0.ntrace.jsonl:1: header run.pid: expected an integer");
}

TEST(TraceReaderErrorsTest, HeaderMissingOrNotFirst) {
  std::string text = TraceText(MakeKernels(2));
  std::string no_header = text.substr(text.find('\n') + 1);
  EXPECT_EQ(ErrorOf(no_header),
            "runA/rank_0.ntrace.jsonl:1: the first record must be the header, got type \"kernel\"");
  EXPECT_EQ(ErrorOf(WithLine(3, Line(1))),
            "runA/rank_0.ntrace.jsonl:3: header: a second header (only the first line may be one)");
}

TEST(TraceReaderErrorsTest, FormatAndVersion) {
  EXPECT_EQ(ErrorOf(WithLine(1, Replace(Line(1), "numtrace-trace", "other-trace"))),
            "runA/rank_0.ntrace.jsonl:1: header format: \"other-trace\" is not \"numtrace-trace\"");
  EXPECT_EQ(ErrorOf(WithLine(1, Replace(Line(1), "\"version\":1", "\"version\":2"))),
            "runA/rank_0.ntrace.jsonl:1: header version: unsupported version 2 (this reader "
            "reads version 1)");
  EXPECT_EQ(ErrorOf(WithLine(1, Replace(Line(1), "\"version\":1,", ""))),
            "runA/rank_0.ntrace.jsonl:1: header version: missing (MUST field of the header)");
}

TEST(TraceReaderErrorsTest, SeqGap) {
  EXPECT_EQ(ErrorOf(WithLine(3, Replace(Line(3), "\"seq\":1", "\"seq\":2"))),
            "runA/rank_0.ntrace.jsonl:3: seq: 2 where 1 was expected (seq must be dense from 0)");
}

TEST(TraceReaderErrorsTest, EmptyFile) {
  EXPECT_EQ(ErrorOf(""), "runA/rank_0.ntrace.jsonl: empty trace");
  EXPECT_EQ(ErrorOf("\n \n"), "runA/rank_0.ntrace.jsonl: empty trace");
}

TEST(TraceReaderErrorsTest, CompleteButInvalidLastLineIsStillAnError) {
  std::string text = TraceText(MakeKernels(3), /*footer=*/false);
  text = Replace(text, "\"seq\":2", "\"seq\":7");
  text.pop_back();  // the last line is complete JSON, only its '\n' is missing
  EXPECT_EQ(ErrorOf(text), "runA/rank_0.ntrace.jsonl:4: seq: 7 where 2 was expected (seq must be dense from 0)");
}

TEST(TraceReaderErrorsTest, CutHeaderIsAnError) {
  std::string text = TraceText(MakeKernels(1));
  EXPECT_EQ(ErrorOf(text.substr(0, 40)), "runA/rank_0.ntrace.jsonl:1: the header line is cut short");
}

}  // namespace
}  // namespace numtrace::analyzer
