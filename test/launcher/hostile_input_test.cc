// The numtrace command against hostile inputs (issue 15): a 50,000-character
// kernel name under `show --kernel`, escapes and newlines in names, labels
// and paths, a gzip-compressed trace under `show --json`, a diff summary
// that is /dev/zero or a fifo, and a `twice` summary.json that links onto a
// trace.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "launcher/command_context.h"
#include "common/format/diff_summary.h"
#include "analyzer/judge/origin_hints.h"
#include "launcher/rank_listing.h"
#include "launcher/show_command.h"
#include "launcher/twice_command.h"
#include "test/launcher/launcher_test_util.h"

namespace numtrace::launcher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestContext;

const std::string kHugeName = "void " + std::string(50000, 'k') + "_gemm<float>()";

// A two-kernel trace: a 50,000-character name, and one holding ESC and a
// newline (JSON-escaped in the file, raw bytes once read); the label too.
std::string HostileTrace() {
  const std::string buffers =
      R"("buffers":[{"arg":1,"addr":"0x1000","offset":0,"bytes":4,"dtype":"f32","dtype_from":"name","role":"out",)"
      R"("stats":{"n":1,"nan":0,"inf":0,"ninf":0,"zero":0,"sub":0,"min":1,"max":1,"sum":1,"l1":1,"l2":1,"hash":"00000000000000aa"}}])";
  std::string t =
      R"({"type":"header","format":"numtrace-trace","version":1,"producer":"test","run":{"label":"lab\u001b]0;owned\u0007","argv":["x"],"pid":1,"rank":0,"world_size":1,"host":"h","start_time":"2026-11-29T11:00:00Z"},"capture":{"steps":[0],"outputs":"changed","selector":"all kernels"}})"
      "\n";
  t += R"({"type":"kernel","seq":0,"launch":0,"step":0,"name":")" + kHugeName +
       R"(","stream":7,"grid":[1,1,1],"block":[1,1,1],)" + buffers + "}\n";
  t += R"({"type":"kernel","seq":1,"launch":1,"step":0,"name":"evil\u001b[2J\nseq 9  forged","stream":7,"grid":[1,1,1],"block":[1,1,1],)" +
       buffers + "}\n";
  t += R"({"type":"footer","kernels":2,"launches":2,"dropped":0,"unmeasured":0,"status":"complete","end_time":"2026-11-29T11:30:00Z"})"
       "\n";
  return t;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(HostileShow, AFiftyThousandCharacterNameUnderKernelRegexIsFound) {
  TempDir tmp;
  WriteText(tmp / "rank_0.ntrace.jsonl", HostileTrace());
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", tmp / "rank_0.ntrace.jsonl", "--kernel", "k.*gemm"}, t.ctx), 0) << t.err.str();
  EXPECT_THAT(t.out.str(), HasSubstr("1 of 2 kernels shown"));
  EXPECT_THAT(t.out.str(), HasSubstr("seq 0  step 0  void kkkk"));
  TestContext bad;
  EXPECT_EQ(ShowCommandMain({"show", tmp / "rank_0.ntrace.jsonl", "--kernel", "(a)\\1"}, bad.ctx), 2);
  EXPECT_THAT(bad.err.str(), HasSubstr("is not a valid regex (RE2 syntax)"));
  EXPECT_EQ(CountLines(bad.err.str()), 1);
}

TEST(HostileShow, NamesLabelsAndPathsAreEscapedAsNumtraceDiffEscapesThem) {
  TempDir tmp;
  const std::string dir = tmp / "odd\ndir";
  std::filesystem::create_directories(dir);
  WriteText(dir + "/rank_0.ntrace.jsonl", HostileTrace());
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", dir + "/rank_0.ntrace.jsonl", "--seq", "1"}, t.ctx), 0) << t.err.str();
  const std::string out = t.out.str();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos);
  EXPECT_THAT(out, HasSubstr("odd\\x0adir/rank_0.ntrace.jsonl: label lab^[]0;owned\\x07, rank 0"));
  EXPECT_THAT(out, HasSubstr("evil^[[2J\\x0aseq 9  forged"));
  EXPECT_THAT(out, Not(HasSubstr("\nseq 9")));
  // The launcher's error line escapes the same way.
  TestContext missing;
  EXPECT_EQ(ShowCommandMain({"show", dir + "/\x1b[2Jnope"}, missing.ctx), 2);
  EXPECT_EQ(CountLines(missing.err.str()), 1);
  EXPECT_THAT(missing.err.str(), HasSubstr("odd\\x0adir/^[[2Jnope"));
  EXPECT_EQ(missing.err.str().find('\x1b'), std::string::npos);
}

TEST(HostileShow, JsonReadsAGzipCompressedTraceAsThePlainListingDoes) {
  TempDir tmp;
  const std::string gz = tmp / "rank_0.ntrace.jsonl.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string text = HostileTrace();
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", gz, "--json", "--seq", "1"}, t.ctx), 0) << t.err.str();
  EXPECT_EQ(CountLines(t.out.str()), 1);
  EXPECT_THAT(t.out.str(), HasSubstr(R"({"type":"kernel","seq":1,"launch":1,)"));
  TestContext all;
  ASSERT_EQ(ShowCommandMain({"show", gz, "--json"}, all.ctx), 0);
  EXPECT_EQ(CountLines(all.out.str()), 2);
}

TEST(HostileShow, JsonEscapesC1ControlsThatAreValidJson) {
  TempDir tmp;
  std::string text = HostileTrace();
  const std::string evil = "evil\\u001b[2J\\n";
  text.replace(text.find(evil), evil.size(), "c1\xc2\x9b");  // U+009B (CSI), raw: valid JSON
  WriteText(tmp / "rank_0.ntrace.jsonl", text);
  TestContext t;
  ASSERT_EQ(ShowCommandMain({"show", tmp / "rank_0.ntrace.jsonl", "--json", "--seq", "1"}, t.ctx), 0) << t.err.str();
  EXPECT_THAT(t.out.str(), HasSubstr(R"("name":"c1\u009bseq 9  forged")"));
  EXPECT_EQ(t.out.str().find("\xc2\x9b"), std::string::npos);
}

TEST(HostileSummary, DevZeroAFifoAndAHugeFileAreRefusedAtOnce) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo.json").c_str(), 0644), 0);
  for (const std::string& path : {std::string("/dev/zero"), tmp / "fifo.json"}) {
    absl::StatusOr<DiffSummaryView> s = ReadDiffSummary(path);
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(path + ": the diff summary is a "));
  }
  std::filesystem::path big = tmp / "big.json";
  WriteText(big, "{");
  std::filesystem::resize_file(big, kMaxDiffSummaryBytes + 1);
  absl::StatusOr<DiffSummaryView> s = ReadDiffSummary(big);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("more than the 256.0 MiB"));
}

TEST(HostileListing, TheRunListingAndTwiceEscapePathsAndNames) {
  TempDir tmp;
  const std::string dir = tmp / "run\x1b[2J\ndir";
  std::filesystem::create_directories(dir);
  WriteText(dir + "/rank_0.ntrace.jsonl", HostileTrace());
  std::ostringstream listing;
  EXPECT_EQ(ListRankTraces(dir, listing), 1);
  EXPECT_EQ(listing.str().find('\x1b'), std::string::npos) << listing.str();
  EXPECT_THAT(listing.str(), HasSubstr("run^[[2J\\x0adir/rank_0.ntrace.jsonl"));
  EXPECT_EQ(CountLines(listing.str()), 1);

  DiffSummaryView view;
  view.has_origins = true;
  view.origin_count = 1;
  OriginView o;
  o.a_seq = 1;
  o.a_name = "evil\x1b[2J\nseq 9  forged";
  o.status = Verdict::kDiverged;
  view.origins.push_back(o);
  std::ostringstream out;
  PrintOrigins(view, out);
  EXPECT_EQ(out.str().find('\x1b'), std::string::npos);
  EXPECT_THAT(out.str(), HasSubstr("seq 1  evil^[[2J\\x0aseq 9  forged"));
  EXPECT_THAT(out.str(), Not(HasSubstr("\nseq 9")));
}

TEST(HostileListing, ATraceWithDroppedRecordsIsNeverCalledComplete) {
  TempDir tmp;
  std::string t = HostileTrace();
  const std::string clean = R"("dropped":0,)";
  t.replace(t.find(clean), clean.size(), R"("dropped":42,)");
  WriteText(tmp / "rank_0.ntrace.jsonl", t);
  std::ostringstream listing;
  ListRankTraces(tmp.path(), listing);
  EXPECT_THAT(listing.str(), Not(HasSubstr("complete")));
  EXPECT_THAT(listing.str(), HasSubstr("INCOMPLETE: 42 records dropped (the writer queue was full)"));
}

TEST(HostileOrigins, HintsMatchAFiftyThousandCharacterName) {
  const analyzer::OriginHint* h = analyzer::HintForKernel("void " + std::string(50000, 'x') + "_scatter_kernel<float>");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(std::string(h->family), "index_add/scatter with atomics");
}

TEST(HostileTwice, ASummaryLinkedOntoATraceIsRefusedBeforeAnyJob) {
  TempDir tmp;
  const std::string hunt = tmp / "hunt";
  std::filesystem::create_directories(hunt);
  WriteText(tmp / "rank_0.ntrace.jsonl", "precious");
  std::filesystem::create_symlink(tmp / "rank_0.ntrace.jsonl", hunt + "/summary.json");
  TestContext t;
  EXPECT_EQ(TwiceCommandMain({"twice", "-o", hunt, "--force", "--", "sh", "-c", "touch ran"}, t.ctx), 2);
  EXPECT_THAT(t.err.str(), HasSubstr("summary.json: the hunt's summary names a symbolic link (to " + (tmp / "rank_0.ntrace.jsonl") +
                                     "); refused, also with --force"));
  EXPECT_EQ(CountLines(t.err.str()), 1);
  std::ifstream in(tmp / "rank_0.ntrace.jsonl");
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "precious");
  EXPECT_FALSE(std::filesystem::exists(hunt + "/run1")) << "a job ran";
}

}  // namespace
}  // namespace numtrace::launcher
