// The settings table (common/settings/settings.h): its entries are complete and
// unique, ParseConfig reads exactly them, and docs/configuration.md's
// reference table is the table rendered (the two cannot drift).
#include "common/settings/settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "common/settings/config.h"
#include "test/util/test_paths.h"

namespace numtrace::settings {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

constexpr const char kBegin[] = "<!-- settings-table: generated from common/settings/settings.cc; begin -->\n";
constexpr const char kEnd[] = "<!-- settings-table: end -->";

TEST(SettingsTable, EveryEntryIsCompleteAndNamesAreUnique) {
  std::set<std::string> variables, options;
  for (const Setting& s : Settings()) {
    const std::string v(s.variable);
    EXPECT_TRUE(v.starts_with("NUMTRACE_")) << v;
    EXPECT_TRUE(variables.insert(v).second) << "two entries for " << v;
    EXPECT_NE(s.parse, nullptr) << v;
    EXPECT_FALSE(s.accepted.empty()) << v;
    EXPECT_FALSE(s.help.empty()) << v;
    EXPECT_EQ(s.help.find('\n'), std::string_view::npos) << v;
    if (s.option.empty()) {
      EXPECT_TRUE(s.value_name.empty() && s.implicit_value.empty() && !s.run_required) << v;
      continue;
    }
    EXPECT_FALSE(s.value_name.empty()) << v;
    std::string_view rest = s.option;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string name(rest.substr(0, comma));
      EXPECT_TRUE(name.starts_with("-")) << v << ": " << name;
      EXPECT_TRUE(options.insert(name).second) << "two entries use " << name;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    // An implicit value is itself a valid value.
    if (!s.implicit_value.empty()) {
      Config c;
      EXPECT_TRUE(s.parse(s.implicit_value, &c)) << v;
    }
  }
  EXPECT_EQ(FindSetting("NUMTRACE_STEPS")->option, "--steps");
  EXPECT_EQ(FindSetting("NUMTRACE_NOT_A_SETTING"), nullptr);
  // ENABLE first: when it is off nothing else is read.
  EXPECT_EQ(Settings().front().variable, "NUMTRACE_ENABLE");
}

TEST(SettingsTable, ParseConfigReadsExactlyTheTablesVariables) {
  std::set<std::string> asked;
  std::string error;
  auto c = ParseConfig(
      [&asked](const char* name) -> const char* {
        asked.insert(name);
        return nullptr;
      },
      &error);
  ASSERT_TRUE(c.has_value()) << error;
  std::set<std::string> table;
  for (const Setting& s : Settings()) table.insert(std::string(s.variable));
  EXPECT_EQ(asked, table);
}

TEST(SettingsTable, ABadValueIsReportedInPartsAndUnderAnyName) {
  std::string error;
  SettingError detail;
  auto c = ParseConfig(
      [](const char* name) -> const char* {
        return std::string(name) == "NUMTRACE_LAUNCH_COUNT" ? "0x" : nullptr;
      },
      &error, &detail);
  ASSERT_FALSE(c.has_value());
  ASSERT_NE(detail.setting, nullptr);
  EXPECT_EQ(detail.setting->variable, "NUMTRACE_LAUNCH_COUNT");
  EXPECT_EQ(detail.value, "0x");
  EXPECT_EQ(error, detail.Line());
  EXPECT_EQ(error, "NUMTRACE_LAUNCH_COUNT='0x' is not valid; accepted: a count N >= 1 "
                   "(numtrace stays off for this process)");
  EXPECT_EQ(detail.LineFor("--launch-count"), "--launch-count '0x' is not valid; accepted: a count N >= 1");
}

// docs/configuration.md holds the rendered table between two markers; when
// a setting changes, this test prints the block to paste.
TEST(SettingsTable, TheDocsReferenceTableIsTheTable) {
  const std::string doc = Slurp(std::string(NUMTRACE_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_FALSE(doc.empty());
  const size_t begin = doc.find(kBegin);
  const size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "docs/configuration.md lacks the marker " << kBegin;
  ASSERT_NE(end, std::string::npos);
  const std::string in_docs = doc.substr(begin + sizeof(kBegin) - 1, end - begin - (sizeof(kBegin) - 1));
  EXPECT_EQ(in_docs, RenderSettingsTable())
      << "docs/configuration.md's settings table is out of date; replace it with:\n"
      << kBegin << RenderSettingsTable() << kEnd;
}

// Every NUMTRACE_* word the user-facing docs name is a setting, or one of the
// few variables that are not settings of the capture.
TEST(SettingsTable, TheDocsNameNoVariableTheTableLacks) {
  const std::set<std::string> not_settings = {
      "NUMTRACE_REPORTED",  // set by the shim itself (one line per process tree)
      "NUMTRACE_LIB",       // the numtrace command: which libnumtrace.so
      "NUMTRACE_LIB_PATH",  // the numtrace command tells the hooks where the library is
  };
  const std::regex word("NUMTRACE_[A-Z0-9_]+");
  for (const char* page : {"/docs/configuration.md", "/README.md", "/docs/troubleshooting.md"}) {
    const std::string text = Slurp(std::string(NUMTRACE_SOURCE_DIR) + page);
    ASSERT_FALSE(text.empty()) << page;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) {
      const std::string name = it->str();
      EXPECT_TRUE(FindSetting(name) != nullptr || not_settings.count(name)) << page << " names " << name;
    }
  }
}

}  // namespace
}  // namespace numtrace::settings

namespace numtrace::settings {
namespace {

// docs/format.md lists the settings the header's capture.settings holds.
TEST(SettingsTable, FormatDocsListEveryRecaptureSetting) {
  const std::string doc = Slurp(std::string(NUMTRACE_SOURCE_DIR) + "/docs/format.md");
  const size_t at = doc.find("### The header's capture settings");
  ASSERT_NE(at, std::string::npos);
  const std::string section = doc.substr(at, doc.find("\n#", at + 1) - at);
  for (const Setting& s : Settings()) {
    const bool listed = section.find("`" + std::string(s.variable) + "`") != std::string::npos;
    EXPECT_EQ(listed, s.recapture) << s.variable;
  }
}

}  // namespace
}  // namespace numtrace::settings
