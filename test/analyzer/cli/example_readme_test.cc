// examples/basic/README.md names the seq where the example pair diverges;
// it must be the seq the tool reports (it once said 181 where the tool and
// the generator say 183).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <regex>
#include <sstream>
#include <string>

#include "analyzer/cli/diff_command.h"
#include "test/util/scratch_dir.h"
#include "test/util/test_paths.h"

namespace numtrace::analyzer {
namespace {

TEST(ExampleReadmeTest, NamesTheFirstDivergenceTheToolReports) {
  const std::string dir = std::string(NUMTRACE_SOURCE_DIR) + "/examples/basic";
  const std::string readme = numtrace::testing::ReadFileText(dir + "/README.md");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(readme, m, std::regex(R"(A seq (\d+) / B seq (\d+))"))) << readme;
  const std::string a = dir + "/run_a", b = dir + "/run_b";
  const char* argv[] = {"numtrace-diff", a.c_str(), b.c_str(), "--json", "-"};
  std::ostringstream out, err;
  ASSERT_EQ(DiffMain(5, argv, out, err, false), kExitDiverged) << err.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(out.str())).get(doc), simdjson::SUCCESS);
  int64_t a_seq = -1, b_seq = -1;
  ASSERT_EQ(doc["first_divergence"]["a_seq"].get(a_seq), simdjson::SUCCESS);
  ASSERT_EQ(doc["first_divergence"]["b_seq"].get(b_seq), simdjson::SUCCESS);
  EXPECT_EQ(std::to_string(a_seq), m[1].str());
  EXPECT_EQ(std::to_string(b_seq), m[2].str());
}

}  // namespace
}  // namespace numtrace::analyzer
