// numtrace merge (issue 27): shard summaries of a 16-rank run merged equal the
// summary of one diff over all 16 ranks, field by field, whatever the split
// and the order the shards are given in; and every bad input is refused in
// one line naming the file, exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/diff_command.h"
#include "analyzer/cli/merge_command.h"
#include "simdjson.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

Result Call(int (*main)(int, const char* const*, std::ostream&, std::ostream&), std::vector<std::string> args) {
  std::vector<const char*> argv = {"numtrace"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}
int Diff(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return DiffMain(argc, const_cast<const char**>(argv), out, err, false);
}
Result Merge(std::vector<std::string> args) { return Call(MergeMain, std::move(args)); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SummaryMerge : public ::testing::Test {
 protected:
  static constexpr int kRanks = 16;
  static void SetUpTestSuite() {
    dir_ = new fs::path(numtrace::testing::FreshTestDir("merge"));
    // Two 2-step runs of 16 ranks. In B, rank 11's layer-2 GEMM is scaled
    // at step 0 (a small score, early), rank 5 turns NaN at step 1 (an
    // infinite score, later): the first divergence by launch order is rank
    // 11's, the top by score rank 5's.
    for (const char* side : {"a", "b"}) {
      for (int r = 0; r < kRanks; ++r) {
        const bool b = std::string(side) == "b";
        const std::string extra = b && r == 11 ? " --perturb 2 --perturb-step 0" : b && r == 5 ? " --nan-at-step 1" : "";
        const std::string cmd = "RANK=" + std::to_string(r) + " NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR=" +
                                (*dir_ / side).string() + " " + NUMTRACE_BINARY_DIR + "/bin/numtrace-sim --steps 2" +
                                extra + " >/dev/null";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      }
    }
    Result full = Call(Diff, {P("a"), P("b"), "--json", P("full.json")});
    ASSERT_EQ(full.code, 1) << full.err;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string P(const std::string& name) { return (*dir_ / name).string(); }
  // numtrace diff A B --ranks LIST into A_shard_LIST.json (once); returns the path.
  static std::string Shard(const std::string& list, const std::string& a = "a", const std::string& b = "b") {
    const std::string path = P(a + "_shard_" + list + ".json");
    if (!fs::exists(path)) {
      Result r = Call(Diff, {P(a), P(b), "--ranks", list, "--json", path});
      EXPECT_NE(r.code, 2) << r.err;
    }
    return path;
  }
  static fs::path* dir_;
};
fs::path* SummaryMerge::dir_ = nullptr;

// Every member of the full diff's summary is the merged one's, and no more.
// Nothing is ignored: a complete merge carries no `shard`, as the full
// diff's summary does not; and `ranks` entries, compared whole, hold every
// rank's own fields.
void ExpectSameSummary(const std::string& merged_path, const std::string& full_path) {
  simdjson::dom::parser pm, pf;
  simdjson::dom::object m = pm.load(merged_path), f = pf.load(full_path);
  std::vector<std::string> keys_m, keys_f;
  for (auto [k, v] : m) keys_m.emplace_back(k);
  for (auto [k, v] : f) keys_f.emplace_back(k);
  EXPECT_EQ(keys_m, keys_f);
  for (auto [k, v] : f) {
    simdjson::dom::element mv;
    ASSERT_FALSE(m[k].get(mv)) << k;
    EXPECT_EQ(simdjson::minify(mv), simdjson::minify(v)) << "field " << k;
  }
  // And byte for byte: the merge writes what the diff writes.
  EXPECT_EQ(Slurp(merged_path), Slurp(full_path));
}

TEST_F(SummaryMerge, FourShardsOfFourEqualTheFullDiff) {
  Result m = Merge({Shard("0-3"), Shard("4-7"), Shard("8-11"), Shard("12-15"), "--json", P("m4.json")});
  EXPECT_EQ(m.code, 1) << m.err;  // diverged, as the full diff
  EXPECT_NE(m.out.find("merged 4 shards: 16 of 16 ranks, verdict diverged"), std::string::npos) << m.out;
  ExpectSameSummary(P("m4.json"), P("full.json"));
  // The premise: first divergence by launch order (rank 11), top by score (rank 5).
  simdjson::dom::parser p;
  simdjson::dom::element f = p.load(P("full.json"));
  EXPECT_EQ(int64_t(f["first_divergence"]["rank"]), 11);
  EXPECT_EQ(int64_t(f["origins"]["top"].at(0)["rank"]), 5);
  EXPECT_EQ(int64_t(f["first_nonfinite"]["b"]["rank"]), 5);
}

TEST_F(SummaryMerge, AnUnevenSplitInAnyOrderEqualsTheFullDiff) {
  Result m = Merge({Shard("11-15"), Shard("0-2"), Shard("10"), Shard("3-9"), "--json", P("mu.json")});
  EXPECT_EQ(m.code, 1) << m.err;
  ExpectSameSummary(P("mu.json"), P("full.json"));
  // A merge of merges: a partial merge is itself a shard.
  Result part = Merge({Shard("0-2"), Shard("3-9"), "--json", P("part.json")});
  EXPECT_EQ(part.code, 1) << part.err;  // rank 5 is in it
  Result all = Merge({P("part.json"), Shard("10"), Shard("11-15"), "--json", P("mm.json")});
  EXPECT_EQ(all.code, 1) << all.err;
  ExpectSameSummary(P("mm.json"), P("full.json"));
}

TEST_F(SummaryMerge, MissingRanksAreSaidAndTheSummaryIsIncomplete) {
  Result m = Merge({Shard("0-3"), Shard("12-15"), "--json", P("miss.json")});
  EXPECT_EQ(m.code, 0) << m.err;  // the ranks it has agree
  EXPECT_NE(m.out.find("incomplete: ranks 4-11 in no shard"), std::string::npos) << m.out;
  simdjson::dom::parser p;
  simdjson::dom::element s = p.load(P("miss.json"));
  EXPECT_FALSE(bool(s["complete"]));
  EXPECT_EQ(simdjson::minify(s["shard"]), R"({"ranks":[0,1,2,3,12,13,14,15],"of":16})");
  EXPECT_EQ(Merge({Shard("0-3"), Shard("12-15"), "--json", P("miss2.json"), "--strict"}).code, 1);
  Result ends = Merge({Shard("4-7"), Shard("10"), "--json", P("miss3.json")});
  EXPECT_NE(ends.out.find("merged 2 shards: 5 of 16 ranks"), std::string::npos) << ends.out;
  EXPECT_NE(ends.out.find("incomplete: ranks 0-3, 8-9, 11-15 in no shard"), std::string::npos) << ends.out;
  // A huge `of` (read from the file) is a gap, never counted through.
  std::string huge = Slurp(Shard("0-3"));
  huge.replace(huge.find("\"of\":16"), 7, "\"of\":18000000000000000000");
  std::ofstream(P("huge.json")) << huge;
  Result h = Merge({P("huge.json"), "--json", P("miss4.json")});
  EXPECT_NE(h.out.find("incomplete: ranks 4-17999999999999999999 in no shard"), std::string::npos) << h.out;
}

// Watch mode (digests of every step): `steps` at the top is the entry of the
// rank whose first differing step comes first (rank 3's step 5, not rank
// 1's step 12), in the full diff and in the merge.
TEST_F(SummaryMerge, WatchModeStepsRollUpAsInTheFullDiff) {
  const std::string bin = std::string(NUMTRACE_BINARY_DIR) + "/bin/";
  for (const char* side : {"wa", "wb"}) {
    const std::string perturb = std::string(side) == "wb"
        ? R"(p=""; [ $r = 1 ] && p="--perturb 2 --perturb-step 12"; [ $r = 3 ] && p="--perturb 2 --perturb-step 5"; )"
        : "p=; ";
    const std::string cmd = bin + "numtrace run -o " + P(side) + " --watch -- sh -c 'for r in 0 1 2 3; do " + perturb +
                            "RANK=$r " + bin + "numtrace-sim --steps 20 $p; done' >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  ASSERT_EQ(Call(Diff, {P("wa"), P("wb"), "--json", P("wfull.json")}).code, 1);
  Result m = Merge({Shard("2-3", "wa", "wb"), Shard("0-1", "wa", "wb"), "--json", P("wm.json")});
  EXPECT_EQ(m.code, 1) << m.err;
  ExpectSameSummary(P("wm.json"), P("wfull.json"));
  simdjson::dom::parser p;
  simdjson::dom::element f = p.load(P("wfull.json"));
  EXPECT_EQ(int64_t(f["steps"]["first_differing"]), 5);
  EXPECT_EQ(simdjson::minify(f["steps"]), simdjson::minify(f["ranks"].at(3)["steps"]));
}

// A count a later numtrace adds is an unknown field to this one: not
// refused, not summed into the top level, and kept in its rank's entry,
// which the merge copies whole.
TEST_F(SummaryMerge, ACountThisVersionDoesNotKnowIsIgnored) {
  const std::string s03 = Shard("0-3"), s47 = Shard("4-7");
  Result plain = Merge({s03, s47, "--json", P("plain.json")});
  ASSERT_NE(plain.code, 2) << plain.err;
  std::string later = Slurp(s47);
  const size_t at = later.rfind("\"only_b\":");
  ASSERT_NE(at, std::string::npos);
  later.insert(at, "\"later_count\":7,");
  std::ofstream(P("later.json")) << later;
  Result m = Merge({s03, P("later.json"), "--json", P("with_later.json")});
  EXPECT_EQ(m.code, plain.code) << m.err;
  EXPECT_EQ(m.err, "");
  simdjson::dom::parser pp, pl;
  simdjson::dom::element p = pp.load(P("plain.json")), l = pl.load(P("with_later.json"));
  for (const char* key : {"verdict", "counts", "match_methods", "first_divergence"}) {
    EXPECT_EQ(simdjson::minify(l[key]), simdjson::minify(p[key])) << key;
  }
  EXPECT_TRUE(l["counts"]["later_count"].error()) << "summed into the top level";
  EXPECT_NE(simdjson::minify(l["ranks"]).find("\"later_count\":7"), std::string::npos) << "lost from its entry";
}

TEST_F(SummaryMerge, BadInputsAreOneLineNamingTheFileExit2) {
  const std::string s03 = Shard("0-3"), s47 = Shard("4-7"), s26 = Shard("2-6");
  auto write = [](const std::string& path, const std::string& text) { std::ofstream(path) << text; };
  // Another run pair: A against A (a different B path).
  Result other = Call(Diff, {P("a"), P("a"), "--ranks", "4-7", "--json", P("other.json")});
  ASSERT_EQ(other.code, 0) << other.err;
  std::string text = Slurp(s47);
  std::string of8 = text;
  of8.replace(of8.find("\"of\":16"), 7, "\"of\":8");
  write(P("of8.json"), of8);
  std::string no_order = text;
  for (size_t at; (at = no_order.find("\"order\":")) != std::string::npos;) {
    no_order.erase(at, no_order.find(',', at) + 1 - at);
  }
  write(P("no_order.json"), no_order);
  write(P("cut.json"), text.substr(0, text.size() / 2));
  write(P("array.json"), "[1,2]");
  write(P("other_format.json"), R"({"format":"something-else","version":1})");
  write(P("empty.json"), R"({"format":"numtrace-diff-summary","version":1,"shard":{"ranks":[],"of":16},)"
                         R"("a":{"path":"x"},"b":{"path":"y"},"tolerance":{},"ranks":[]})");
  write(P("bad_entry.json"), R"({"format":"numtrace-diff-summary","version":1,"shard":{"ranks":[0],"of":16},)"
                             R"("a":{"path":"x"},"b":{"path":"y"},"tolerance":{},"ranks":[{"rank":0}]})");
  struct Case {
    std::vector<std::string> args;
    std::string names, says;
  };
  const std::vector<Case> cases = {
      {{s03, s26}, s26, "rank 2 is also in " + s03},
      {{s03, s47, s03}, s03, "the same file given twice"},
      {{s03, P("full.json")}, P("full.json"), "not a shard"},
      {{s03, P("of8.json")}, P("of8.json"), "of 8 ranks"},
      {{s03, P("other.json")}, P("other.json"), "not the same runs"},
      {{s03, P("no_order.json")}, P("no_order.json"), "has no 'order'"},
      {{s03, P("cut.json")}, P("cut.json"), "not a JSON object"},
      {{P("array.json")}, P("array.json"), "not a JSON object"},
      {{P("other_format.json")}, P("other_format.json"), "not a numtrace-diff summary"},
      {{P("empty.json")}, P("empty.json"), "lists no ranks"},
      {{P("bad_entry.json")}, P("bad_entry.json"), "rank 0 has no valid 'verdict'"},
      {{s03, P("absent.json")}, P("absent.json"), ""},
      {{s03, s47, "--json", s47, "--force"}, s47, ""},  // the output is an input
      {{s03, s47}, "--json", "required"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    if (std::find(args.begin(), args.end(), "--json") == args.end() && c.names != "--json") {
      args.insert(args.end(), {"--json", P("refused.json")});
    }
    Result r = Merge(args);
    EXPECT_EQ(r.code, 2) << c.names << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(P("refused.json"))) << c.names;
  }
  EXPECT_EQ(Slurp(s47), text);  // never written over
}

}  // namespace
}  // namespace numtrace::analyzer
