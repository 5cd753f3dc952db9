// File: shim/writer/trace_writer.h
//
// The trace file writer of libnumtrace.so: a RecordSink with a bounded queue
// and one background thread. Producers (the engine's Pump, markers) only
// queue; the thread writes kernel records (numbered by the engine, `seq`) as JSON
// Lines and writes whole lines with write(2), never a buffered stdio flush,
// so a process killed at any moment leaves complete lines behind, except at
// most the very last one when the kill lands inside a write (Linux may cut a
// multi-page write short on SIGKILL); readers drop that cut line and call the
// trace truncated. The file is created on the first
// write (a process that never captures writes nothing), header first; the
// footer is written by Finish on a clean exit only.
//
// Memory is bounded: when the queue holds `queue_records` records, Push drops
// the record and counts it; the drop is reported in a `note` and in the
// footer's `dropped`. Watch mode's `kernel_name` definitions are the
// exception: they are always queued (one per distinct kernel, and every
// later digest names its id).
//
// The same thread calls the pump (Engine::Pump) every cycle, so completed
// measurements are collected there and never on the application's threads.
//
// Fork: writers register with pthread_atfork. No writer lock is held across
// fork (prepare takes them, both sides release them); the child forgets the
// parent's file and queue and never writes (it has no writer thread).
//
// Example:
//   TraceWriterOptions o;
//   o.output_dir = "/tmp/run"; o.rank = 0; o.header = header;
//   TraceWriter w(o);
//   w.SetPump([&] { engine.Pump(); });
//   w.Push(std::move(kernel_record));
//   w.Finish(/*launches=*/100, /*dropped=*/0);  // footer; w.path() names the file
#ifndef NUMTRACE_SHIM_WRITER_TRACE_WRITER_H_
#define NUMTRACE_SHIM_WRITER_TRACE_WRITER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "common/format/records.h"
#include "shim/writer/record_sink.h"

namespace numtrace::shim {

struct TraceWriterOptions {
  std::string output_dir = "./numtrace";
  int64_t rank = 0;
  TraceHeader header;
  size_t queue_records = 65536;
  std::chrono::milliseconds period{10};  // how often the thread pumps and writes
};

class TraceWriter : public RecordSink {
 public:
  explicit TraceWriter(TraceWriterOptions options);
  // Stops the thread and writes what is queued, with no footer (only Finish
  // marks a trace complete).
  ~TraceWriter() override;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Called on the writer thread at every cycle. Set before records flow.
  void SetPump(std::function<void()> pump);

  bool Push(KernelRecord record) override;
  bool Push(NoteRecord note) override;
  bool Push(DigestRecord digest) override;
  bool Push(KernelNameRecord name) override;
  // Before the file exists the values join its header (written with the
  // first record); after, an `environment` record. Alone it creates no file.
  bool Push(EnvironmentRecord env) override;
  void Flush() override;
  void Finish(uint64_t launches, uint64_t dropped) override;
  void SetFooterExtras(uint64_t unmeasured,
                       std::vector<std::pair<std::string, uint64_t>> counters) override;

  // Blocks until everything pushed so far is written (tests, step ends).
  void WaitWritten();

  std::string path() const;               // empty until the file exists
  uint64_t dropped() const { return dropped_.load(); }
  uint64_t kernels_written() const { return kernels_written_.load(); }
  bool failed() const { return failed_.load(); }  // the file could not be created or written

  // pthread_atfork hooks (registered by the constructor; public for the registry).
  void BeforeFork();
  void AfterForkParent();
  // Tests: the lock the fork prepare handler takes first (the registry of
  // writers), held as a fork in progress holds it.
  static std::unique_lock<std::mutex> LockForkRegistryForTest();
  void AfterForkChild();

 private:
  using Item = std::variant<KernelRecord, NoteRecord, DigestRecord, KernelNameRecord, EnvironmentRecord>;
  bool Enqueue(Item item);
  void Loop();
  // One cycle: pump, take the queue, serialise, write. Writer thread only
  // (or the caller of Finish once the thread has stopped).
  void Cycle();
  void WriteBytes(std::string_view bytes);

  const TraceWriterOptions options_;
  std::function<void()> pump_;

  mutable std::mutex mu_;  // queue_, flags; never held during pump or write
  std::condition_variable cv_;
  std::vector<Item> queue_;
  bool wake_ = false, stop_ = false;
  uint64_t cycles_started_ = 0, cycles_done_ = 0;
  std::condition_variable done_cv_;

  // Writer-thread state (or Finish's, after the join).
  int fd_ = -1;
  std::string path_;  // guarded by mu_ for readers
  uint64_t kernels_ = 0;  // kernel records written
  uint64_t reported_drops_ = 0;
  std::string buffer_;
  EnvironmentValues header_environment_;  // merged into the header when the file is created
  uint64_t footer_unmeasured_ = 0;  // guarded by mu_
  std::vector<std::pair<std::string, uint64_t>> footer_counters_;  // guarded by mu_

  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> kernels_written_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> finished_{false};
  bool child_ = false;  // this object was inherited through fork
  std::thread thread_;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_WRITER_TRACE_WRITER_H_
