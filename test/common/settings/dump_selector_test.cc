// NUMTRACE_DUMP and its companions: the three selection forms, the
// expectation, and bad values (one line, numtrace off).
#include "common/settings/dump_selector.h"

#include <gtest/gtest.h>

#include "common/settings/config.h"
#include "test/common/settings/map_env.h"

namespace numtrace::settings {
namespace {

using testing::MapEnv;

KernelNames Kernel(std::string symbol, std::string demangled) {
  KernelNames k;
  k.symbol = std::move(symbol);
  k.demangled = std::move(demangled);
  return k;
}

TEST(DumpSelectorTest, SeqListSelectsExactlyThoseSeqs) {
  std::string why;
  auto sel = ParseDumpSelection("seq:7, 3,7", &why);
  ASSERT_TRUE(sel);
  EXPECT_EQ(sel->seqs, (std::vector<uint64_t>{3, 7}));
  KernelNames k = Kernel("k", "k");
  DumpSelector s(*sel);
  std::vector<uint64_t> picked;
  for (uint64_t seq = 0; seq < 10; ++seq) {
    if (s.Select(seq, k)) picked.push_back(seq);
  }
  EXPECT_EQ(picked, (std::vector<uint64_t>{3, 7}));
}

TEST(DumpSelectorTest, NameCountPicksTheKthLaunchOfThatKernelByAnyOfItsNames) {
  std::string why;
  KernelNames gemm = Kernel("_Z4gemmPfS_", "gemm(float*, float*)");
  KernelNames add = Kernel("_Z3addPf", "add(float*)");
  for (const char* name : {"_Z4gemmPfS_", "gemm(float*, float*)"}) {
    auto sel = ParseDumpSelection(std::string(name) + "#1", &why);
    ASSERT_TRUE(sel) << name;
    DumpSelector s(*sel);
    // seq 0 gemm (#0), 1 add, 2 gemm (#1), 3 gemm (#2)
    EXPECT_FALSE(s.Select(0, gemm));
    EXPECT_FALSE(s.Select(1, add));
    EXPECT_TRUE(s.Select(2, gemm)) << name;
    EXPECT_FALSE(s.Select(3, gemm));
  }
}

TEST(DumpSelectorTest, RegexPicksEveryMatchingLaunch) {
  std::string why;
  auto sel = ParseDumpSelection("regex:^gemm\\(", &why);
  ASSERT_TRUE(sel);
  DumpSelector s(*sel);
  // Kernel infos live as long as the engine's cache: the selector keys on them.
  const KernelNames gemm = Kernel("_Z4gemmPfS_", "gemm(float*, float*)"), add = Kernel("_Z3addPf", "add(float*)");
  EXPECT_TRUE(s.Select(0, gemm));
  EXPECT_FALSE(s.Select(1, add));
  EXPECT_TRUE(s.Select(2, gemm));
}

// Issue 15: `--dump seq:99` in a run of 3 launches said nothing.
TEST(DumpSelectorTest, WhatTheSelectionNamedAndNeverCameIsSaid) {
  std::string why;
  const KernelNames k = Kernel("k", "k");
  auto seqs = ParseDumpSelection("seq:1,99", &why);
  ASSERT_TRUE(seqs);
  DumpSelector s(*seqs);
  for (uint64_t seq = 0; seq < 3; ++seq) s.Select(seq, k);
  EXPECT_EQ(s.Unreached(3), "NUMTRACE_DUMP=seq:1,99: seq 99 never reached (the run captured seq 0..2): not "
                            "dumped; the seq numbers are those of a run with the same capture settings");
  auto reached = ParseDumpSelection("seq:2", &why);
  DumpSelector all(*reached);
  for (uint64_t seq = 0; seq < 3; ++seq) all.Select(seq, k);
  EXPECT_EQ(all.Unreached(3), "");
  auto nth = ParseDumpSelection("k#5", &why);
  DumpSelector n(*nth);
  for (uint64_t seq = 0; seq < 2; ++seq) n.Select(seq, k);
  EXPECT_EQ(n.Unreached(2), "NUMTRACE_DUMP=k#5: launch #5 of k never reached (2 captured launches of it): not dumped");
  auto re = ParseDumpSelection("regex:^gemm", &why);
  DumpSelector r(*re);
  r.Select(0, k);
  EXPECT_EQ(r.Unreached(1), "NUMTRACE_DUMP=regex:^gemm: no captured launch matched (the run captured seq 0..0): nothing dumped");
  DumpSelector none(*re);
  EXPECT_EQ(none.Unreached(0), "NUMTRACE_DUMP=regex:^gemm: no captured launch matched (no launch was captured): nothing dumped");
}

TEST(DumpSelectorTest, BadSelectionsAreRefused) {
  std::string why;
  for (const char* bad : {"", "seq:", "seq:1,,2", "seq:x", "seq:-1", "regex:", "regex:(", "#3", "name#",
                          "name#x", "name"}) {
    EXPECT_FALSE(ParseDumpSelection(bad, &why)) << bad;
  }
  EXPECT_NE(why.find("seq:N"), std::string::npos);
}

TEST(DumpSelectorTest, ExpectationSplitsAtTheLastAt) {
  auto e = ParseDumpExpectation("a@b@16,32");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name, "a@b");
  EXPECT_EQ(e->bytes, (std::vector<uint64_t>{16, 32}));
  auto name_only = ParseDumpExpectation("kernel@");
  ASSERT_TRUE(name_only);
  EXPECT_TRUE(name_only->bytes.empty());
  EXPECT_FALSE(ParseDumpExpectation("kernel"));
  EXPECT_FALSE(ParseDumpExpectation("kernel@1,x"));
}

TEST(DumpConfigTest, SettingsAreReadWithDefaults) {
  std::string error;
  auto c = ParseConfig(MapEnv({{"NUMTRACE_DUMP", "seq:41"}, {"NUMTRACE_DUMP_EXPECT", "k@4,8"}}), &error);
  ASSERT_TRUE(c) << error;
  ASSERT_TRUE(c->dump);
  EXPECT_EQ(c->dump->seqs, (std::vector<uint64_t>{41}));
  EXPECT_EQ(c->dump_max_bytes, 4ull << 30);
  EXPECT_TRUE(c->dump_dir.empty());  // beside the trace
  c = ParseConfig(MapEnv({{"NUMTRACE_DUMP", "k#0"}, {"NUMTRACE_DUMP_DIR", "/tmp/d"},
                          {"NUMTRACE_DUMP_MAX_BYTES", "1MiB"}}), &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->dump_dir, "/tmp/d");
  EXPECT_EQ(c->dump_max_bytes, 1u << 20);
}

TEST(DumpConfigTest, BadValuesGiveOneLineNamingTheVariable) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"NUMTRACE_DUMP", "seq:abc"}}, "NUMTRACE_DUMP="},
      {{{"NUMTRACE_DUMP", "regex:[unclosed"}}, "NUMTRACE_DUMP="},
      {{{"NUMTRACE_DUMP", "seq:1"}, {"NUMTRACE_DUMP_MAX_BYTES", "0"}}, "NUMTRACE_DUMP_MAX_BYTES="},
      {{{"NUMTRACE_DUMP", "seq:1"}, {"NUMTRACE_DUMP_MAX_BYTES", "lots"}}, "NUMTRACE_DUMP_MAX_BYTES="},
      {{{"NUMTRACE_DUMP", "seq:1"}, {"NUMTRACE_DUMP_DIR", " "}}, "NUMTRACE_DUMP_DIR="},
      {{{"NUMTRACE_DUMP_EXPECT", "k@1"}}, "NUMTRACE_DUMP_EXPECT="},                       // no dump
      {{{"NUMTRACE_DUMP", "seq:1,2"}, {"NUMTRACE_DUMP_EXPECT", "k@1"}}, "NUMTRACE_DUMP_EXPECT="},  // two launches
      {{{"NUMTRACE_DUMP", "regex:k"}, {"NUMTRACE_DUMP_EXPECT", "k@1"}}, "NUMTRACE_DUMP_EXPECT="},
  };
  for (const auto& [env, var] : cases) {
    std::string error;
    EXPECT_FALSE(ParseConfig(MapEnv(env), &error)) << var;
    EXPECT_EQ(error.rfind(var, 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find("numtrace stays off"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace numtrace::settings
