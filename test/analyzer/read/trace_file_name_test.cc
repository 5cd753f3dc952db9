#include "analyzer/read/trace_file_name.h"

#include "analyzer/read/importer.h"

#include <gtest/gtest.h>

namespace numtrace::analyzer {
namespace {

TEST(TraceFileNameTest, RecognisesTheNamesWeAndTorchtitanWrite) {
  auto a = ParseTraceFileName("run/rank_3.ntrace.jsonl");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->rank, 3);
  EXPECT_EQ(a->importer, FindImporter("numtrace"));
  auto b = ParseTraceFileName("rank_12.pid4242.ntrace.jsonl");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->rank, 12);
  auto c = ParseTraceFileName("/x/rank_7_activations.log");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rank, 7);
  EXPECT_EQ(c->importer, FindImporter("debugmode-log"));
  // Compressed copies (gzip -k) are found in a directory too, as given by
  // name they were read (hostile round 4, finding 12).
  auto gz = ParseTraceFileName("gzd/rank_2.ntrace.jsonl.gz");
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->rank, 2);
  EXPECT_EQ(gz->importer, FindImporter("numtrace"));
  EXPECT_TRUE(ParseTraceFileName("rank_7_activations.log.gz"));
  EXPECT_FALSE(ParseTraceFileName("rank_3.ntrace.jsonl.tmp.gz"));
  for (const char* no : {"rank_3.ntrace.jsonl.tmp", "rank_.ntrace.jsonl", "rank_3.pid.ntrace.jsonl",
                         "rank_3.jsonl", "xrank_3.ntrace.jsonl", "rank_3x.ntrace.jsonl",
                         "rank_99999999999999999999.ntrace.jsonl"}) {
    EXPECT_FALSE(ParseTraceFileName(no)) << no;
  }
}

TEST(TraceFileNameTest, RankAndStem) {
  EXPECT_EQ(RankFromFileName("a/rank_5.pid1.ntrace.jsonl"), 5);
  EXPECT_EQ(RankFromFileName("a/rank_5_anything"), 5);
  EXPECT_FALSE(RankFromFileName("rank5.jsonl"));
  EXPECT_EQ(FileStem("runA/rank_3.ntrace.jsonl"), "rank_3");
  EXPECT_EQ(FileStem("x/rank_3_activations.log"), "rank_3_activations");
  EXPECT_EQ(FileStem("trace.jsonl"), "trace");
  EXPECT_EQ(FileStem(".jsonl"), ".jsonl");
}

}  // namespace
}  // namespace numtrace::analyzer
