// The shim's patterns on hostile names (issue 15): a 50,000-character (and a
// 1,000,000-character) kernel name is matched in linear time without a deep
// recursion - on a thread with a 256 KiB stack, where std::regex's default
// (backtracking) executor overflows long before - and bad patterns are
// refused when the configuration is read.
#include "common/settings/name_pattern.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <string>

#include "common/settings/config.h"
#include "test/common/settings/map_env.h"

namespace numtrace::settings {
namespace {

struct SmallStackRun {
  const NamePattern* pattern;
  const std::string* name;
  bool result = false;
};

// Runs pattern.Search(name) on a thread whose stack is 256 KiB.
bool SearchOnSmallStack(const NamePattern& pattern, const std::string& name) {
  SmallStackRun run{&pattern, &name};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t t;
  EXPECT_EQ(pthread_create(
                &t, &attr,
                [](void* p) -> void* {
                  auto* r = static_cast<SmallStackRun*>(p);
                  r->result = r->pattern->Search(*r->name);
                  return nullptr;
                },
                &run),
            0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  return run.result;
}

TEST(NamePattern, HugeNamesMatchWithoutDeepRecursion) {
  std::string why;
  std::optional<NamePattern> p = NamePattern::Compile("k.*gemm", &why);
  ASSERT_TRUE(p) << why;
  for (size_t n : {size_t{50000}, size_t{1000000}}) {
    const std::string hit = "void " + std::string(n, 'k') + "_gemm<float>";
    const std::string miss = "void " + std::string(n, 'k') + "_gemv<float>";
    EXPECT_TRUE(SearchOnSmallStack(*p, hit)) << n;
    EXPECT_FALSE(SearchOnSmallStack(*p, miss)) << n;
  }
  std::optional<NamePattern> alt = NamePattern::Compile("(a|b)*c", &why);
  ASSERT_TRUE(alt);
  EXPECT_TRUE(SearchOnSmallStack(*alt, std::string(200000, 'a') + "c"));
}

TEST(NamePattern, RefusesWhatCannotBeMatchedSafely) {
  std::string why;
  EXPECT_FALSE(NamePattern::Compile("", &why));
  EXPECT_FALSE(NamePattern::Compile("(", &why));
  EXPECT_EQ(why, "not a valid ECMAScript regex");
  EXPECT_FALSE(NamePattern::Compile("(a)\\1", &why));  // needs backtracking
  EXPECT_EQ(why, "a back-reference (not supported)");
  EXPECT_FALSE(NamePattern::Compile(std::string(NamePattern::kMaxPatternBytes + 1, 'a'), &why));
  EXPECT_FALSE(NamePattern::Compile("((a{1000}){1000}){1000}", &why));
  EXPECT_EQ(why, "a pattern too large to compile");
  EXPECT_FALSE(NamePattern().Search("anything"));
  EXPECT_FALSE(NamePattern::Compile("a)|(b", &why));  // not two alternatives once wrapped
}

TEST(NamePattern, SearchesAnywhereAndKeepsAnchorsAndAlternatives) {
  std::string why;
  std::optional<NamePattern> start = NamePattern::Compile("^void", &why);
  ASSERT_TRUE(start);
  EXPECT_TRUE(start->Search("void k()"));
  EXPECT_FALSE(start->Search("a void k()"));
  std::optional<NamePattern> end = NamePattern::Compile("float>$", &why);
  EXPECT_TRUE(end->Search("k<float>"));
  EXPECT_FALSE(end->Search("k<float>()"));
  std::optional<NamePattern> alt = NamePattern::Compile("gemv|sgemm", &why);
  EXPECT_TRUE(alt->Search("ampere_sgemm_128x64_nn"));
  EXPECT_TRUE(alt->Search("gemv2T_kernel"));
  EXPECT_FALSE(alt->Search("gemm"));
  EXPECT_TRUE(NamePattern::Compile("a", &why)->Search("line1\nline2a"));
}

TEST(NamePattern, EveryShimSettingThatTakesAPatternUsesIt) {
  const std::string huge = "void at::native::" + std::string(50000, 'x') + "gemm_kernel<float>";
  Config c = testing::ConfigFrom({{"NUMTRACE_KERNEL", "regex:^void at::native::x.*gemm"},
                                  {"NUMTRACE_STEP_MODE", "kernel:x+gemm_kernel"},
                                  {"NUMTRACE_DUMP", "regex:x.*gemm"}});
  ASSERT_EQ(c.include.size(), 1u);
  EXPECT_TRUE(c.include[0].Matches(huge));
  EXPECT_FALSE(c.include[0].Matches("void at::native::gemm"));
  EXPECT_TRUE(c.step_regex.Search(huge));
  ASSERT_TRUE(c.dump);
  EXPECT_TRUE(c.dump->regex.Search(huge));
  std::string error;
  EXPECT_FALSE(ParseConfig(testing::MapEnv({{"NUMTRACE_KERNEL", "regex:(a)\\1"}}), &error));
  EXPECT_NE(error.find("NUMTRACE_KERNEL"), std::string::npos) << error;
  EXPECT_FALSE(ParseConfig(testing::MapEnv({{"NUMTRACE_DUMP", "regex:("}}), &error));
  EXPECT_NE(error.find("NUMTRACE_DUMP"), std::string::npos) << error;
}

}  // namespace
}  // namespace numtrace::settings
