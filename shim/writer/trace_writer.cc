#include "shim/writer/trace_writer.h"

#include <cerrno>
#include <cstring>

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <type_traits>

#include "common/format/jsonl_writer.h"
#include "shim/writer/trace_file.h"
#include "shim/log/log.h"

namespace numtrace::shim {
namespace {

// Every live writer, for the fork handlers. Leaked on purpose: writers may
// be destroyed from atexit handlers after static destructors would have run.
struct Registry {
  std::mutex mu;
  std::vector<TraceWriter*> writers;
};
Registry& TheRegistry() {
  static Registry* r = new Registry;
  return *r;
}

void PrepareFork() {
  Registry& r = TheRegistry();
  r.mu.lock();
  for (TraceWriter* w : r.writers) w->BeforeFork();
}
void ParentAfterFork() {
  Registry& r = TheRegistry();
  for (TraceWriter* w : r.writers) w->AfterForkParent();
  r.mu.unlock();
}
void ChildAfterFork() {
  Registry& r = TheRegistry();
  for (TraceWriter* w : r.writers) w->AfterForkChild();
  r.mu.unlock();
}

void Register(TraceWriter* w) {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork); });
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.writers.push_back(w);
}

void Unregister(TraceWriter* w) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.writers.erase(std::remove(r.writers.begin(), r.writers.end(), w), r.writers.end());
}

}  // namespace

std::unique_lock<std::mutex> TraceWriter::LockForkRegistryForTest() {
  return std::unique_lock<std::mutex>(TheRegistry().mu);
}

TraceWriter::TraceWriter(TraceWriterOptions options) : options_(std::move(options)) {
  Register(this);
  thread_ = std::thread([this] { Loop(); });
}

TraceWriter::~TraceWriter() {
  if (!child_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      pump_ = nullptr;  // whatever it pumps may already be gone
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (!finished_.load()) Cycle();
    if (fd_ >= 0) close(fd_);
  }
  Unregister(this);
}

void TraceWriter::SetPump(std::function<void()> pump) {
  std::lock_guard<std::mutex> lock(mu_);
  pump_ = std::move(pump);
}

bool TraceWriter::Enqueue(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (child_ || finished_.load(std::memory_order_relaxed)) return false;
    // A kernel_name definition is never dropped: every later digest refers
    // to its id, and a reader refuses an id used before it is defined, so
    // losing one would cost the whole trace instead of a few records. There
    // is one per distinct kernel, so memory stays bounded all the same.
    const bool definition = std::holds_alternative<KernelNameRecord>(item);
    if (!definition && queue_.size() >= options_.queue_records) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    queue_.push_back(std::move(item));
  }
  return true;
}

bool TraceWriter::Push(KernelRecord record) { return Enqueue(std::move(record)); }
bool TraceWriter::Push(NoteRecord note) { return Enqueue(std::move(note)); }
bool TraceWriter::Push(DigestRecord digest) { return Enqueue(std::move(digest)); }
bool TraceWriter::Push(KernelNameRecord name) { return Enqueue(std::move(name)); }
bool TraceWriter::Push(EnvironmentRecord env) { return Enqueue(std::move(env)); }

void TraceWriter::Flush() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

void TraceWriter::WaitWritten() {
  std::unique_lock<std::mutex> lock(mu_);
  if (child_ || stop_) return;
  const uint64_t target = cycles_started_ + 1;
  wake_ = true;
  cv_.notify_all();
  done_cv_.wait(lock, [&] { return cycles_done_ >= target || stop_; });
}

void TraceWriter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, options_.period, [&] { return wake_ || stop_; });
    const bool stopping = stop_;
    wake_ = false;
    const uint64_t cycle = ++cycles_started_;
    lock.unlock();
    Cycle();
    lock.lock();
    cycles_done_ = cycle;
    done_cv_.notify_all();
    if (stopping) return;
  }
}

void TraceWriter::Cycle() {
  std::function<void()> pump;
  std::vector<Item> items;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pump = pump_;
  }
  if (pump) pump();
  {
    std::lock_guard<std::mutex> lock(mu_);
    items.swap(queue_);
  }
  buffer_.clear();
  for (Item& item : items) {
    if (auto* k = std::get_if<KernelRecord>(&item)) {
      ++kernels_;  // numbered by the engine (record_sink.h)
      AppendJsonLine(*k, &buffer_);
    } else if (auto* e = std::get_if<EnvironmentRecord>(&item); e != nullptr && fd_ < 0) {
      MergeEnvironment(&header_environment_, e->values);  // the header is not written yet
    } else {
      // Notes and watch mode's digest and kernel_name records: written as queued.
      std::visit(
          [this](const auto& r) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(r)>, KernelRecord>) AppendJsonLine(r, &buffer_);
          },
          item);
    }
  }
  const uint64_t drops = dropped_.load(std::memory_order_relaxed);
  if (drops > reported_drops_) {
    NoteRecord note;
    note.msg = std::to_string(drops - reported_drops_) +
               " records dropped: the writer queue was full (NUMTRACE_QUEUE_RECORDS=" +
               std::to_string(options_.queue_records) + ")";
    AppendJsonLine(note, &buffer_);
    reported_drops_ = drops;
  }
  if (!buffer_.empty()) WriteBytes(buffer_);
  kernels_written_.store(kernels_, std::memory_order_relaxed);
}

void TraceWriter::WriteBytes(std::string_view bytes) {
  if (failed_.load()) return;
  if (fd_ < 0) {
    std::string path, error;
    fd_ = CreateTraceFile(options_.output_dir, options_.rank, getpid(), &path, &error);
    if (fd_ < 0) {
      failed_.store(true);
      log::Error("{}", error);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      path_ = path;
    }
    std::string header;
    if (header_environment_.empty()) {
      AppendJsonLine(options_.header, &header);
    } else {
      TraceHeader h = options_.header;
      MergeEnvironment(&h.environment, header_environment_);
      AppendJsonLine(h, &header);
    }
    if (!WriteAll(fd_, header)) {
      failed_.store(true);
      log::Error("writing {} failed ({}); the trace ends here", path_, std::strerror(errno));
      return;
    }
  }
  // The reason (a full disk: "No space left on device") is part of the line:
  // the file itself can only end without its footer.
  if (!failed_.load() && !WriteAll(fd_, bytes)) {
    failed_.store(true);
    log::Error("writing {} failed ({}); the trace ends here", path_, std::strerror(errno));
  }
}

void TraceWriter::Finish(uint64_t launches, uint64_t dropped) {
  if (child_ || finished_.load()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Cycle();  // whatever arrived after the thread's last cycle
  finished_.store(true);
  if (fd_ >= 0) {
    FooterRecord footer;
    footer.kernels = kernels_;
    footer.launches = launches;
    footer.dropped = dropped_.load() + dropped;
    footer.status = "complete";
    {
      std::lock_guard<std::mutex> lock(mu_);
      footer.unmeasured = footer_unmeasured_;
      footer.counters = footer_counters_;
    }
    footer.end_time = UtcNowRfc3339();
    buffer_.clear();
    AppendJsonLine(footer, &buffer_);
    WriteBytes(buffer_);
  }
}

void TraceWriter::SetFooterExtras(uint64_t unmeasured,
                                  std::vector<std::pair<std::string, uint64_t>> counters) {
  std::lock_guard<std::mutex> lock(mu_);
  footer_unmeasured_ = unmeasured;
  footer_counters_ = std::move(counters);
}

std::string TraceWriter::path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return path_;
}


void TraceWriter::BeforeFork() { mu_.lock(); }
void TraceWriter::AfterForkParent() { mu_.unlock(); }

void TraceWriter::AfterForkChild() {
  // The child has no writer thread and must never touch the parent's file.
  child_ = true;
  finished_.store(true);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  queue_.clear();
  pump_ = nullptr;
  // The handle names a thread that does not exist here: forget it without
  // joining (joining would hang; destroying a joinable handle would abort).
  new (&thread_) std::thread();
  mu_.unlock();
}

}  // namespace numtrace::shim
