#include "shim/writer/trace_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <simdjson.h>
#include <thread>

#include "test/util/scratch_dir.h"

namespace numtrace::shim {
namespace {

namespace fs = std::filesystem;

class TraceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = numtrace::testing::FreshTestDir("tw").string();
    fs::remove(dir);  // the writer must create it itself (and only when it writes)
  }
  void TearDown() override { fs::remove_all(dir); }

  TraceWriterOptions Options(size_t queue = 1000, int period_ms = 5) {
    TraceWriterOptions o;
    o.output_dir = dir;
    o.rank = 0;
    o.header.producer = "test";
    o.queue_records = queue;
    o.period = std::chrono::milliseconds(period_ms);
    return o;
  }
  // `seq` as the engine numbers it (the writer keeps it).
  static KernelRecord Kernel(uint64_t launch, uint64_t seq = 0) {
    KernelRecord k;
    k.seq = seq;
    k.name = std::string("k").append(std::to_string(launch));
    k.launch = launch;
    return k;
  }
  // Every complete (newline-terminated) line parsed; returns their `type`s.
  // A last line without its newline is what a kill in the middle of write(2)
  // leaves (Linux may cut a multi-page write short on SIGKILL); readers drop
  // it and call the trace truncated, so it is counted in `*cut`, not parsed.
  std::vector<std::string> Types(const std::string& path, std::vector<uint64_t>* seqs = nullptr,
                                 int* cut = nullptr) {
    std::ifstream in(path, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> types;
    simdjson::dom::parser parser;
    size_t start = 0;
    while (start < all.size()) {
      const size_t end = all.find('\n', start);
      if (end == std::string::npos) {
        if (cut != nullptr) ++*cut;
        else ADD_FAILURE() << "last line has no newline";
        break;
      }
      const std::string line = all.substr(start, end - start);
      start = end + 1;
      simdjson::dom::element e;
      auto err = parser.parse(line).get(e);
      EXPECT_EQ(err, simdjson::SUCCESS) << "unparsable line: " << line;
      if (err) continue;
      std::string_view t;
      EXPECT_EQ(e["type"].get(t), simdjson::SUCCESS);
      types.emplace_back(t);
      uint64_t seq;
      if (seqs && t == "kernel" && e["seq"].get(seq) == simdjson::SUCCESS) seqs->push_back(seq);
    }
    return types;
  }
  std::string dir;
};

TEST_F(TraceWriterTest, HeaderRecordsFooterInOrder) {
  std::string path;
  {
    TraceWriter w(Options());
    EXPECT_TRUE(w.Push(Kernel(10)));
    NoteRecord n;
    n.msg = "hello";
    EXPECT_TRUE(w.Push(n));
    EXPECT_TRUE(w.Push(Kernel(12, 1)));
    w.WaitWritten();
    EXPECT_EQ(w.kernels_written(), 2u);
    w.SetFooterExtras(/*unmeasured=*/4, {{"launches_seen", 20}, {"runtime_without_driver", 2}});
    w.Finish(/*launches=*/20, /*dropped=*/3);
    EXPECT_FALSE(w.Push(Kernel(13)));  // after the footer nothing goes in
    path = w.path();
  }
  EXPECT_EQ(path, dir + "/rank_0.ntrace.jsonl");
  std::vector<uint64_t> seqs;
  EXPECT_EQ(Types(path, &seqs), (std::vector<std::string>{"header", "kernel", "note", "kernel", "footer"}));
  EXPECT_EQ(seqs, (std::vector<uint64_t>{0, 1}));
  std::ifstream in(path);
  std::string last, line;
  while (std::getline(in, line)) last = line;
  EXPECT_NE(last.find("\"kernels\":2"), std::string::npos) << last;
  EXPECT_NE(last.find("\"launches\":20"), std::string::npos) << last;
  EXPECT_NE(last.find("\"dropped\":3"), std::string::npos) << last;
  EXPECT_NE(last.find("\"unmeasured\":4"), std::string::npos) << last;
  EXPECT_NE(last.find("\"launches_seen\":20"), std::string::npos) << last;
  EXPECT_NE(last.find("\"runtime_without_driver\":2"), std::string::npos) << last;
}

TEST_F(TraceWriterTest, EnvironmentBeforeTheFileJoinsTheHeaderAfterItIsARecord) {
  std::string path;
  {
    TraceWriterOptions o = Options();
    o.header.environment = {{"gpu.name", "G"}};
    TraceWriter w(o);
    EXPECT_TRUE(w.Push(EnvironmentRecord{{{"torch.version", "2.9.0"}, {"gpu.name", "H"}}}));
    w.WaitWritten();
    EXPECT_EQ(w.path(), "") << "an environment alone creates no file";
    EXPECT_TRUE(w.Push(Kernel(1)));
    w.WaitWritten();
    EXPECT_TRUE(w.Push(EnvironmentRecord{{{"torch.matmul.allow_tf32", "true"}}}));
    w.Finish(1, 0);
    path = w.path();
  }
  EXPECT_EQ(Types(path), (std::vector<std::string>{"header", "kernel", "environment", "footer"}));
  std::ifstream in(path);
  std::string header, kernel, env;
  std::getline(in, header);
  std::getline(in, kernel);
  std::getline(in, env);
  EXPECT_NE(header.find(R"("environment":{"gpu.name":"H","torch.version":"2.9.0"})"), std::string::npos) << header;
  EXPECT_EQ(env, R"({"type":"environment","values":{"torch.matmul.allow_tf32":"true"}})");
}

TEST_F(TraceWriterTest, FullQueueDropsCountsAndSaysSo) {
  // A long period and no wake-ups: nothing drains while we push.
  TraceWriter w(Options(/*queue=*/5, /*period_ms=*/60000));
  int accepted = 0;
  for (int i = 0; i < 12; ++i) accepted += w.Push(Kernel(i, accepted));  // a refused seq is reused
  EXPECT_EQ(accepted, 5);
  EXPECT_EQ(w.dropped(), 7u);
  w.Finish(12, 0);
  std::vector<uint64_t> seqs;
  auto types = Types(w.path(), &seqs);
  EXPECT_EQ(types, (std::vector<std::string>{"header", "kernel", "kernel", "kernel", "kernel",
                                             "kernel", "note", "footer"}));
  EXPECT_EQ(seqs, (std::vector<uint64_t>{0, 1, 2, 3, 4}));  // dense despite the drops
  std::ifstream in(w.path());
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("7 records dropped"), std::string::npos);
  EXPECT_NE(all.find("\"dropped\":7"), std::string::npos);
}

TEST_F(TraceWriterTest, FullQueueNeverDropsAKernelNameDefinition) {
  // Watch mode's digests name kernels by the id a kernel_name record defines;
  // losing a definition made the reader refuse the whole trace.
  TraceWriter w(Options(/*queue=*/2, /*period_ms=*/60000));
  EXPECT_TRUE(w.Push(Kernel(0, 0)));
  EXPECT_TRUE(w.Push(Kernel(1, 1)));
  EXPECT_FALSE(w.Push(Kernel(2, 2)));  // full: dropped and counted
  EXPECT_TRUE(w.Push(KernelNameRecord{7, "gemm"}));
  EXPECT_TRUE(w.Push(KernelNameRecord{8, "softmax"}));
  EXPECT_EQ(w.dropped(), 1u);
  w.Finish(3, 0);
  auto types = Types(w.path());
  EXPECT_EQ(types, (std::vector<std::string>{"header", "kernel", "kernel", "kernel_name", "kernel_name",
                                             "note", "footer"}));
}

TEST_F(TraceWriterTest, PumpRunsOnTheWriterThread) {
  TraceWriter w(Options());
  std::atomic<int> pumps{0};
  std::thread::id pump_thread;
  w.SetPump([&] {
    pump_thread = std::this_thread::get_id();
    if (pumps.fetch_add(1) == 0) w.Push(Kernel(1));
  });
  w.WaitWritten();
  w.WaitWritten();
  EXPECT_GE(pumps.load(), 2);
  EXPECT_NE(pump_thread, std::this_thread::get_id());
  EXPECT_EQ(w.kernels_written(), 1u);
  w.Finish(1, 0);
}

TEST_F(TraceWriterTest, NothingPushedNoFile) {
  {
    TraceWriter w(Options());
    w.WaitWritten();
    w.Finish(100, 0);
    EXPECT_EQ(w.path(), "");
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST_F(TraceWriterTest, ForkedChildWritesNothingAndParentIsUnharmed) {
  TraceWriter w(Options(1000, 60000));
  ASSERT_TRUE(w.Push(Kernel(1)));  // queued in the parent at fork time
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child inherits the writer object but must not write with it.
    const bool pushed = w.Push(Kernel(2));
    w.Finish(5, 0);
    _exit(pushed ? 3 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(dir));  // neither the child's Finish nor anything else wrote
  w.Finish(1, 0);
  EXPECT_EQ(Types(w.path()), (std::vector<std::string>{"header", "kernel", "footer"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST_F(TraceWriterTest, ChildThatCapturesGetsItsOwnFile) {
  TraceWriter parent(Options());
  ASSERT_TRUE(parent.Push(Kernel(1)));
  parent.WaitWritten();  // the parent holds rank_0.ntrace.jsonl
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    TraceWriter child(Options());
    child.Push(Kernel(7));
    child.Finish(1, 0);
    _exit(child.path().find(".pid" + std::to_string(getpid())) != std::string::npos ? 0 : 4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  parent.Finish(1, 0);
  EXPECT_EQ(parent.path(), dir + "/rank_0.ntrace.jsonl");
  const std::string child_path = dir + "/rank_0.pid" + std::to_string(pid) + ".ntrace.jsonl";
  EXPECT_EQ(Types(child_path), (std::vector<std::string>{"header", "kernel", "footer"}));
}

TEST_F(TraceWriterTest, KilledMidCaptureLeavesOnlyCompleteLines) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    TraceWriter w(Options(100000, 1));
    for (uint64_t i = 0;; ++i) {
      KernelRecord k = Kernel(i, i);
      k.demangled = std::string(200 + i % 300, 'x');  // lines of varying length
      BufferRecord b;
      b.bytes = i;
      k.buffers.assign(1 + i % 4, b);
      w.Push(std::move(k));
      if (i % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  // Let it write a while, then kill it without warning.
  const std::string path = dir + "/rank_0.ntrace.jsonl";
  for (int i = 0; i < 200 && (!fs::exists(path) || fs::file_size(path) < 200000); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  std::vector<uint64_t> seqs;
  int cut = 0;
  auto types = Types(path, &seqs, &cut);
  ASSERT_GE(types.size(), 2u);
  EXPECT_EQ(types.front(), "header");
  EXPECT_NE(types.back(), "footer");  // cut short: readers must say truncated
  for (size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], i);
  // At most the one line being written when the kill came is incomplete.
  EXPECT_LE(cut, 1);
}

}  // namespace
}  // namespace numtrace::shim
