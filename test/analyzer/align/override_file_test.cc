// Tests for analyzer/align/override_file.h (spec section 4).
#include "analyzer/align/override_file.h"

#include <string>

#include "gtest/gtest.h"
#include "test/analyzer/trace_builder.h"

namespace numtrace::analyzer {
namespace {

TEST(OverrideFile, ParsesKeysCommentsAndBlankLines) {
  absl::StatusOr<Overrides> o = ParseOverrides(
      "# comment\n\n  seq:4 , triton_poi_fused_add#0\n"
      "void at::native::k<4, float>(int, float)#2, seq:17\n",
      "o.txt");
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->rules.size(), 2u);
  EXPECT_TRUE(o->rules[0].a.by_seq);
  EXPECT_EQ(o->rules[0].a.seq, 4u);
  EXPECT_EQ(o->rules[0].b.name, "triton_poi_fused_add");
  EXPECT_EQ(o->rules[0].b.occurrence, 0u);
  EXPECT_EQ(o->rules[0].line, 3);
  // Commas inside a kernel name do not split the line.
  EXPECT_EQ(o->rules[1].a.name, "void at::native::k<4, float>(int, float)");
  EXPECT_EQ(o->rules[1].a.occurrence, 2u);
  EXPECT_EQ(o->rules[1].b.seq, 17u);
}

TEST(OverrideFile, ErrorsNamePathAndLine) {
  struct Case {
    const char* text;
    const char* where;
  } cases[] = {
      {"seq:1 seq:2\n", "o.txt:1: "},
      {"# ok\nseq:x, seq:2\n", "o.txt:2: "},
      {"seq:1, name\n", "o.txt:1: "},
      {"seq:1, name#\n", "o.txt:1: "},
      {"\n\nseq:1, seq:2, seq:3\n", "o.txt:3: "},
      {"seq:1, \n", "o.txt:1: "},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Overrides> o = ParseOverrides(c.text, "o.txt");
    ASSERT_FALSE(o.ok()) << c.text;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(o.status().message()).rfind(c.where, 0), 0u) << o.status();
  }
  absl::StatusOr<Overrides> missing = ReadOverrideFile("/nonexistent/override.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("/nonexistent/override.txt"), std::string::npos);
}

TEST(OverrideFile, ResolvesByNameDemangledNormalizedAndSeq) {
  testing::TraceBuilder tb("t");
  tb.Add("triton_poi_fused_add_3");
  tb.Add("_Z3fooPf");
  tb.trace().kernels[1].demangled = tb.trace().strings.Intern("foo(float*)");
  tb.Add("triton_poi_fused_add_9");
  Trace t = tb.Build();
  auto key = [](std::string name, uint64_t k) {
    OverrideKey key;
    key.name = std::move(name);
    key.occurrence = k;
    return key;
  };
  EXPECT_EQ(ResolveOverrideKey(key("triton_poi_fused_add_3", 0), t), 0u);
  EXPECT_EQ(ResolveOverrideKey(key("triton_poi_fused_add", 1), t), 2u);  // normalized name
  EXPECT_EQ(ResolveOverrideKey(key("foo(float*)", 0), t), 1u);           // demangled
  EXPECT_EQ(ResolveOverrideKey(key("foo(float*)", 1), t), std::nullopt);
  OverrideKey seq;
  seq.by_seq = true;
  seq.seq = 2;
  EXPECT_EQ(ResolveOverrideKey(seq, t), 2u);
  seq.seq = 3;
  EXPECT_EQ(ResolveOverrideKey(seq, t), std::nullopt);
}

}  // namespace
}  // namespace numtrace::analyzer
