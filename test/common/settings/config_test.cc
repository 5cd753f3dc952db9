#include "common/settings/config.h"
#include "common/settings/modes.h"
#include "common/settings/value_parsers.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "test/common/settings/map_env.h"

namespace numtrace::settings {
namespace {

using testing::ConfigFrom;
using testing::MapEnv;

TEST(ConfigTest, DefaultsWithEmptyEnvironment) {
  Config c = ConfigFrom({});
  EXPECT_EQ(c.output_dir, "./numtrace");
  EXPECT_EQ(c.step_mode, StepMode::kMark);
  EXPECT_TRUE(c.steps.Contains(2));
  EXPECT_FALSE(c.steps.Contains(1));
  EXPECT_FALSE(c.steps.Contains(3));
  EXPECT_EQ(c.outputs, OutputsMode::kChanged);
  EXPECT_EQ(c.device_memory, 64ull << 20);
  EXPECT_EQ(c.queue_records, 65536u);
  EXPECT_FALSE(c.launch_count.has_value());
  EXPECT_FALSE(c.strict);
  EXPECT_TRUE(c.enabled);
}

TEST(ConfigTest, WatchModeDigestsEveryStepAndCapturesNoneInFullUnlessAsked) {
  Config off = ConfigFrom({});
  EXPECT_EQ(off.watch, WatchMode::kOff);
  Config full = ConfigFrom({{"NUMTRACE_WATCH", "full"}});
  EXPECT_EQ(full.watch, WatchMode::kFull);
  EXPECT_FALSE(full.steps.Contains(2));  // the default step 2 is not captured in full
  EXPECT_EQ(full.steps.ToString(), "none");
  Config sampled = ConfigFrom({{"NUMTRACE_WATCH", " sampled "}, {"NUMTRACE_STEPS", "7"}});
  EXPECT_EQ(sampled.watch, WatchMode::kSampled);
  EXPECT_TRUE(sampled.steps.Contains(7));
  EXPECT_EQ(ConfigFrom({{"NUMTRACE_WATCH", "off"}}).watch, WatchMode::kOff);
  EXPECT_FALSE(ConfigFrom({{"NUMTRACE_STEPS", "none"}}).steps.Contains(0));
}

TEST(ConfigTest, AValueEndingInALineBreakReadsAsTheValue) {
  // An environment file written on Windows leaves "\r" (and `export
  // X="$(cat f)"` style scripts a "\n") at the end: common/text/trim.h's
  // rule takes them off, as it does blanks; inside a value they stay an error.
  Config c = ConfigFrom({{"NUMTRACE_STEPS", "1,3-4\r\n"}, {"NUMTRACE_WATCH", "\tsampled\r"},
                         {"NUMTRACE_STRICT", "yes\r"}, {"NUMTRACE_MIN_BYTES", "4k\r\n"}});
  EXPECT_EQ(c.steps.ToString(), "1,3-4");
  EXPECT_EQ(c.watch, WatchMode::kSampled);
  EXPECT_TRUE(c.strict);
  EXPECT_EQ(c.min_bytes, 4096u);
  std::string error;
  EXPECT_FALSE(ParseConfig(MapEnv({{"NUMTRACE_STEPS", "1\r\n2"}}), &error));
  EXPECT_NE(error.find("NUMTRACE_STEPS='1\\x0d\\n2'"), std::string::npos) << error;
}

TEST(ConfigTest, ParsesEveryVariable) {
  Config c = ConfigFrom({{"NUMTRACE_OUTPUT_DIR", "/tmp/x"},
                         {"NUMTRACE_STEP_MODE", "kernel:^void at::native::embedding"},
                         {"NUMTRACE_STEPS", "1,3-4"},
                         {"NUMTRACE_LAUNCH_SKIP", "10"},
                         {"NUMTRACE_LAUNCH_COUNT", "5"},
                         {"NUMTRACE_KERNEL", "gemm;regex:^triton_"},
                         {"NUMTRACE_KERNEL_EXCLUDE", "nccl"},
                         {"NUMTRACE_MIN_BYTES", "4k"},
                         {"NUMTRACE_OUTPUTS", "all"},
                         {"NUMTRACE_LOG_LEVEL", "info"},
                         {"NUMTRACE_LABEL", "eager"},
                         {"NUMTRACE_DEVICE_MEMORY", "256MiB"},
                         {"NUMTRACE_CUPTI_LIB", "/opt/libcupti.so.13"},
                         {"NUMTRACE_STRICT", "1"},
                         {"NUMTRACE_QUEUE_RECORDS", "100"}});
  EXPECT_EQ(c.output_dir, "/tmp/x");
  EXPECT_EQ(c.step_mode, StepMode::kKernel);
  EXPECT_EQ(c.step_regex_text, "^void at::native::embedding");
  EXPECT_TRUE(c.steps.Contains(1));
  EXPECT_FALSE(c.steps.Contains(2));
  EXPECT_TRUE(c.steps.Contains(3));
  EXPECT_TRUE(c.steps.Contains(4));
  EXPECT_EQ(c.steps.Listed(), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(c.launch_skip, 10u);
  EXPECT_EQ(c.launch_count, 5u);
  ASSERT_EQ(c.include.size(), 2u);
  EXPECT_TRUE(c.include[0].Matches("ampere_sgemm_128x64"));
  EXPECT_FALSE(c.include[0].is_regex);
  EXPECT_TRUE(c.include[1].is_regex);
  EXPECT_TRUE(c.include[1].Matches("triton_poi_fused_add_0"));
  EXPECT_FALSE(c.include[1].Matches("xtriton_poi"));
  ASSERT_EQ(c.exclude.size(), 1u);
  EXPECT_EQ(c.min_bytes, 4096u);
  EXPECT_EQ(c.outputs, OutputsMode::kAll);
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.label, "eager");
  EXPECT_EQ(c.device_memory, 256ull << 20);
  EXPECT_EQ(c.cupti_lib, "/opt/libcupti.so.13");
  EXPECT_TRUE(c.strict);
  EXPECT_EQ(c.queue_records, 100u);
  EXPECT_NE(c.SelectorText().find("mode=kernel"), std::string::npos);
}

TEST(ConfigTest, RangeModesDefaultToEveryRange) {
  EXPECT_TRUE(ConfigFrom({{"NUMTRACE_STEP_MODE", "profiler"}}).steps.all());
  EXPECT_TRUE(ConfigFrom({{"NUMTRACE_STEP_MODE", "api"}}).steps.all());
  EXPECT_TRUE(ConfigFrom({{"NUMTRACE_STEP_MODE", "nvtx:step"}}).steps.all());
  EXPECT_FALSE(ConfigFrom({{"NUMTRACE_STEP_MODE", "launches:100"}}).steps.all());
  EXPECT_EQ(ConfigFrom({{"NUMTRACE_STEP_MODE", "launches:100"}}).launches_per_step, 100u);
  EXPECT_TRUE(ConfigFrom({{"NUMTRACE_STEPS", "all"}}).steps.Contains(123456));
}

TEST(ConfigTest, ByteSizes) {
  EXPECT_EQ(ParseByteSize("4096"), 4096u);
  EXPECT_EQ(ParseByteSize("512k"), 512u << 10);
  EXPECT_EQ(ParseByteSize("64MiB"), 64u << 20);
  EXPECT_EQ(ParseByteSize("1G"), 1ull << 30);
  EXPECT_FALSE(ParseByteSize("12 parsecs"));
  EXPECT_FALSE(ParseByteSize("-1"));
  EXPECT_FALSE(ParseByteSize(""));
  EXPECT_FALSE(ParseByteSize("99999999999999999999G"));
}

// One boolean parser for every switch.
TEST(ConfigWordsTest, EverySwitchTakesTheSameWords) {
  for (const char* yes : {"1", "true", "yes", "on", "TRUE", " On ", "Yes"}) {
    for (const char* var : {"NUMTRACE_STRICT", "NUMTRACE_ENABLE"}) {
      std::string error;
      auto c = settings::ParseConfig(MapEnv({{var, yes}}), &error);
      ASSERT_TRUE(c.has_value()) << var << "=" << yes << ": " << error;
      if (std::string(var) == "NUMTRACE_STRICT") EXPECT_TRUE(c->strict) << yes;
      else EXPECT_TRUE(c->enabled) << yes;
    }
  }
  for (const char* no : {"0", "false", "no", "off", "OFF", ""}) {
    std::string error;
    auto c = settings::ParseConfig(MapEnv({{"NUMTRACE_STRICT", no}}), &error);
    ASSERT_TRUE(c.has_value()) << no;
    EXPECT_FALSE(c->strict);
    c = settings::ParseConfig(MapEnv({{"NUMTRACE_ENABLE", no}}), &error);
    ASSERT_TRUE(c.has_value()) << no;
    EXPECT_FALSE(c->enabled);
  }
  std::string error;
  EXPECT_FALSE(settings::ParseConfig(MapEnv({{"NUMTRACE_STRICT", "maybe"}}), &error).has_value());
  EXPECT_NE(error.find(settings::kBoolWords), std::string::npos) << error;
}

struct BadCase {
  const char* var;
  const char* value;
  const char* accepted_fragment;
};

// The case as its ctest name shows it (without this, a byte dump of the
// pointers: different at every run, and silent about which value failed).
void PrintTo(const BadCase& b, std::ostream* os) { *os << b.var << "='" << b.value << "'"; }

class BadValueTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadValueTest, OneLineNamingVariableValueAndAcceptedForms) {
  const BadCase& b = GetParam();
  std::string error;
  auto c = ParseConfig(MapEnv({{b.var, b.value}}), &error);
  EXPECT_FALSE(c.has_value());
  EXPECT_NE(error.find(b.var), std::string::npos) << error;
  EXPECT_NE(error.find(std::string("'") + b.value + "'"), std::string::npos) << error;
  EXPECT_NE(error.find(b.accepted_fragment), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    EveryVariable, BadValueTest,
    ::testing::Values(BadCase{"NUMTRACE_STEPS", "two", "N-M"},
                      BadCase{"NUMTRACE_STEPS", "5-3", "N-M"},
                      BadCase{"NUMTRACE_STEPS", "1,,2", "N-M"},
                      BadCase{"NUMTRACE_STEPS", "-1", "N-M"},
                      BadCase{"NUMTRACE_STEP_MODE", "epoch", "launches:N"},
                      BadCase{"NUMTRACE_STEP_MODE", "nvtx:", "nvtx:REGEX"},
                      BadCase{"NUMTRACE_STEP_MODE", "kernel:([", "kernel:REGEX"},
                      BadCase{"NUMTRACE_STEP_MODE", "launches:0", "launches:N"},
                      BadCase{"NUMTRACE_LAUNCH_SKIP", "x", "N >= 0"},
                      BadCase{"NUMTRACE_LAUNCH_COUNT", "0", "N >= 1"},
                      BadCase{"NUMTRACE_KERNEL", "regex:(", "regex:EXPR"},
                      BadCase{"NUMTRACE_KERNEL", ";", "regex:EXPR"},
                      BadCase{"NUMTRACE_KERNEL_EXCLUDE", "regex:", "regex:EXPR"},
                      BadCase{"NUMTRACE_MIN_BYTES", "lots", "64MiB"},
                      BadCase{"NUMTRACE_OUTPUTS", "some", "changed or all"},
                      BadCase{"NUMTRACE_WATCH", "every", "full, sampled or off"},
                      BadCase{"NUMTRACE_LOG_LEVEL", "loud", "debug"},
                      BadCase{"NUMTRACE_DEVICE_MEMORY", "1k", "at least 1MiB"},
                      BadCase{"NUMTRACE_CUPTI_LIB", "", "libcupti"},
                      BadCase{"NUMTRACE_STRICT", "maybe", "1, true, yes, on"},
                      BadCase{"NUMTRACE_ENABLE", "perhaps", "1, true, yes, on"},
                      BadCase{"NUMTRACE_QUEUE_RECORDS", "0", "N >= 1"},
                      BadCase{"NUMTRACE_OUTPUT_DIR", "", "directory"},
                      BadCase{"NUMTRACE_ALLOCATOR", "bogus", "caching or async"},
                      BadCase{"NUMTRACE_ACTIVITY", "sometimes", "1, true, yes, on"},
                      BadCase{"NUMTRACE_HOOKS_LOG", " ", "a file path"},
                      BadCase{"NUMTRACE_DUMP_DIR", "", "a directory path"}));

}  // namespace
}  // namespace numtrace::settings
