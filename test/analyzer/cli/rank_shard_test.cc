// numtrace-diff A B --ranks LIST (issue 27): a shard compares only the
// listed ranks, is marked `shard` {"ranks":[...],"of":N}, and each rank's
// entry is the one the full diff writes for that rank.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/diff_command.h"
#include "analyzer/cli/rank_list.h"
#include "simdjson.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

TEST(RankList, ListsAndRanges) {
  EXPECT_EQ(*ParseRankList("0-3,8"), (std::vector<int64_t>{0, 1, 2, 3, 8}));
  EXPECT_EQ(*ParseRankList("9,3,7"), (std::vector<int64_t>{3, 7, 9}));
  EXPECT_EQ(*ParseRankList("5"), (std::vector<int64_t>{5}));
  for (const char* bad : {"", ",", "1,", "-1", "3-1", "a", "1-", "1-2-3", "2,2", "0-2,1", "0-99999999999", "1 "}) {
    EXPECT_FALSE(ParseRankList(bad).ok()) << bad;
  }
  EXPECT_EQ(std::string(ParseRankList("3-1").status().message()), "--ranks: '3-1' runs backwards (a list such as 0-15 or 3,7,9)");
}

struct Result {
  int code;
  std::string out, err;
};

Result Diff(std::vector<std::string> args) {
  std::vector<const char*> argv = {"numtrace-diff"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = DiffMain(static_cast<int>(argv.size()), argv.data(), out, err, false);
  return {code, out.str(), err.str()};
}

std::string Minified(simdjson::dom::element e) { return simdjson::minify(e); }

class RankShard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(numtrace::testing::FreshTestDir("shard"));
    // Two runs of 4 ranks; in B rank 2's layer-2 GEMM is scaled.
    for (const char* side : {"a", "b"}) {
      for (int r = 0; r < 4; ++r) {
        const bool bad = std::string(side) == "b" && r == 2;
        const std::string cmd = "RANK=" + std::to_string(r) + " NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR=" +
                                (*dir_ / side).string() + " " + NUMTRACE_BINARY_DIR + "/bin/numtrace-sim --steps 1" +
                                (bad ? " --perturb 2" : "") + " >/dev/null";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      }
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string P(const std::string& name) { return (*dir_ / name).string(); }
  static fs::path* dir_;
};
fs::path* RankShard::dir_ = nullptr;

TEST_F(RankShard, AShardIsMarkedAndItsRanksAreTheFullDiffsEntries) {
  Result full = Diff({P("a"), P("b"), "--json", P("full.json"), "--force"});
  ASSERT_EQ(full.code, 1) << full.err;
  Result healthy = Diff({P("a"), P("b"), "--ranks", "0-1,3", "--json", P("s.json"), "--force"});
  EXPECT_EQ(healthy.code, 0) << healthy.err;
  EXPECT_NE(healthy.out.find("shard: 3 of 4 ranks compared (--ranks)"), std::string::npos) << healthy.out;
  Result bad = Diff({P("a"), P("b"), "--ranks", "2", "--json", P("s2.json"), "--force"});
  EXPECT_EQ(bad.code, 1) << bad.err;

  simdjson::dom::parser p1, p2, p3;
  simdjson::dom::element f = p1.load(P("full.json")), s = p2.load(P("s.json")), s2 = p3.load(P("s2.json"));
  EXPECT_EQ(Minified(s["shard"]), R"({"ranks":[0,1,3],"of":4})");
  EXPECT_EQ(Minified(s2["shard"]), R"({"ranks":[2],"of":4})");
  EXPECT_TRUE(f["shard"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(std::string_view(s["verdict"]), "identical");
  EXPECT_EQ(std::string_view(s2["verdict"]), "diverged");
  // Each shard's per-rank entry is the full diff's entry for that rank.
  simdjson::dom::array fr = f["ranks"], sr = s["ranks"], sr2 = s2["ranks"];
  std::vector<std::string> full_ranks;
  for (auto e : fr) full_ranks.push_back(Minified(e));
  ASSERT_EQ(full_ranks.size(), 4u);
  std::vector<std::string> shard_ranks;
  for (auto e : sr) shard_ranks.push_back(Minified(e));
  EXPECT_EQ(shard_ranks, (std::vector<std::string>{full_ranks[0], full_ranks[1], full_ranks[3]}));
  std::vector<std::string> shard2;
  for (auto e : sr2) shard2.push_back(Minified(e));
  EXPECT_EQ(shard2, (std::vector<std::string>{full_ranks[2]}));
  // And the diverged shard's first divergence is the full diff's.
  EXPECT_EQ(Minified(s2["first_divergence"]), Minified(f["first_divergence"]));
}

TEST_F(RankShard, BadListsAndInputsAreOneLineExit2) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{P("a"), P("b"), "--ranks", "0,9"}, {P("a"), P("b"), "--ranks", "3-1"},
        {P("a"), P("b"), "--ranks", "x"}, {P("a/rank_0.ntrace.jsonl"), P("b/rank_0.ntrace.jsonl"), "--ranks", "0"}}) {
    Result r = Diff(args);
    EXPECT_EQ(r.code, 2) << args[3];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--ranks"), std::string::npos) << r.err;
  }
  EXPECT_NE(Diff({P("a"), P("b"), "--ranks", "0,9"}).err.find("rank 9 is not in"), std::string::npos);
}

}  // namespace
}  // namespace numtrace::analyzer
