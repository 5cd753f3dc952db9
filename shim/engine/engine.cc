#include "shim/engine/engine.h"

#include <cinttypes>
#include <cstring>
#include <cstdio>
#include <optional>
#include <utility>

#include "common/settings/modes.h"
#include "common/text/one_line.h"
#include "shim/engine/capture_counters.h"
#include "shim/engine/provenance.h"
#include "shim/log/log.h"
#include "shim/reduce/host_reduce.h"

namespace numtrace::shim {
namespace {

std::atomic<uint64_t> g_next_engine_id{1};

// What one thread remembers between a launch's ENTER and EXIT. Trivially
// destructible, so reaching it costs no TLS guard on the hot path.
struct HotState {
  uint64_t engine_id;
  uint64_t function;
  int64_t index;  // pending index when the launch is captured, else -1
  int64_t step;   // the launch's step (watch mode digests it at EXIT)
  bool entered;
};
thread_local HotState t_hot{};

// Scratch reused by this thread's captured launches: no allocation once warm.
struct Scratch {
  std::vector<ScannedBuffer> scanned;
  MeasurementPlan plan;
  bool dump = false;  // the launch being captured is dumped too
  bool dropped = false;  // its "before" was refused: the launch is dropped whole
};
Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}

constexpr uint64_t kDropNotesMax = 16;

// Operator level: a CPU tensor's elements as the host reduction reads them.
// A contiguous one is read in place; another (a transposed or expanded view)
// is gathered in element order into this thread's scratch first, so the
// stats and hash are those of the tensor's values, whatever its strides.
struct OpScratch {
  std::vector<uint8_t> gathered;
};

bool IsContiguous(const OpTensor& t) {
  if (t.strides.empty()) return true;
  int64_t expect = 1;
  for (size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1 && t.strides[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

uint64_t ElementsOf(const OpTensor& t) {
  uint64_t n = 1;
  for (int64_t d : t.shape) n *= d < 0 ? 0 : static_cast<uint64_t>(d);
  return n;
}

// The tensor's elements in element order: in place when contiguous, else
// gathered into this thread's scratch (valid until the next call).
const uint8_t* CpuBytes(const OpTensor& t, uint64_t bytes) {
  const auto* base = reinterpret_cast<const uint8_t*>(t.data);
  if (bytes == 0 || IsContiguous(t)) return base;
  thread_local OpScratch scratch;
  std::vector<uint8_t>& out = scratch.gathered;
  if (out.capacity() > (64u << 20) && bytes <= (64u << 20)) std::vector<uint8_t>().swap(out);  // keep memory bounded
  out.resize(bytes);
  // Odometer over the shape: the element at index (i0..ik) lies at
  // sum(i_d * stride_d) elements from `data`.
  const size_t rank = t.shape.size();
  std::vector<int64_t> index(rank, 0);
  const uint64_t n = ElementsOf(t);
  int64_t at = 0;  // element offset of `index`
  for (uint64_t e = 0; e < n; ++e) {
    std::memcpy(out.data() + e * t.element_size, base + at * static_cast<int64_t>(t.element_size), t.element_size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < t.shape[d]) {
        at += t.strides[d];
        break;
      }
      at -= (t.shape[d] - 1) * t.strides[d];
      index[d] = 0;
    }
  }
  return out.data();
}

BufferStats MeasureCpuTensor(const OpTensor& t) {
  const uint64_t bytes = ElementsOf(t) * t.element_size;
  return ReduceHost(CpuBytes(t, bytes), bytes, t.dtype, HostReduceThreads());
}

bool NonFinite(const BufferStats& s) { return s.nan != 0 || s.inf != 0 || s.ninf != 0; }

std::string OpDeviceName(const OpTensor& t) {
  switch (t.device) {
    case OpDevice::kCpu: return "cpu";
    case OpDevice::kCuda: return "cuda:" + std::to_string(t.device_index);
    case OpDevice::kOther: break;
  }
  return std::string(t.device_name.empty() ? std::string_view("other") : t.device_name);
}

}  // namespace

Engine::Engine(const settings::Config& config, Device* device, RecordSink* sink)
    : config_(config),
      device_(device),
      sink_(sink),
      id_(g_next_engine_id.fetch_add(1)),
      kernels_(config, &annotations_),
      tracker_(config) {
  if (config.watch != settings::WatchMode::kOff) {
    watch_ = std::make_unique<StepWatch>(config.watch, config.min_bytes, device, sink);
  }
}

Engine::~Engine() { Shutdown(); }

void Engine::OnLaunchEnter(const LaunchEvent& launch) {
  if (config_.level == CaptureLevel::kOps) return;  // operator level: the ops are the records
  HotState& h = t_hot;
  if (h.entered && h.engine_id == id_) AbandonStale();  // the last ENTER never got its EXIT
  const bool starts =
      config_.step_mode == settings::StepMode::kKernel && kernels_.StartsStep(launch.function, launch.symbol);
  const LaunchDecision d = tracker_.Decide(starts);
  h.engine_id = id_;
  h.function = launch.function;
  h.entered = true;
  h.index = -1;
  h.step = d.step;
  if (!d.selected) {
    h.step = tracker_.Count(d).step;
    return;
  }
  h.index = Begin(launch, d, /*at_enter=*/true);
}

void Engine::OnLaunch(const LaunchEvent& launch) {
  if (config_.level == CaptureLevel::kOps) return;
  HotState& h = t_hot;
  if (h.entered && h.engine_id == id_) {
    if (h.function == launch.function) {
      h.entered = false;
      if (h.index >= 0) MeasureAfter(launch, h.index);
      Watch(launch, h.step);
      return;
    }
    AbandonStale();
  }
  // No ENTER was seen for this launch: decide now, measure after only.
  const bool starts =
      config_.step_mode == settings::StepMode::kKernel && kernels_.StartsStep(launch.function, launch.symbol);
  const LaunchDecision d = tracker_.Decide(starts);
  if (!d.selected) {
    Watch(launch, tracker_.Count(d).step);
    return;
  }
  const int64_t index = Begin(launch, d, /*at_enter=*/false);
  if (index >= 0) MeasureAfter(launch, index);
  Watch(launch, d.step);
}

bool Engine::Quiet() const {
  // Watch mode digests every launch: none may skip decoding.
  return shut_down_.load(std::memory_order_relaxed) || config_.level == CaptureLevel::kOps ||
         (watch_ == nullptr && tracker_.Quiet());
}

void Engine::AbandonStale() {
  HotState& h = t_hot;
  h.entered = false;
  if (h.index >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<uint64_t>(h.index) >= base_) {
      PendingRecord& p = pending_[h.index - base_];
      if (!p.Complete()) {
        p.dropped = true;
        p.drop_reason = "the launch did not go through (no EXIT after ENTER)";
      }
    }
  }
  h.index = -1;
}

int64_t Engine::Begin(const LaunchEvent& launch, LaunchDecision d, bool at_enter) {
  const KernelInfo& kernel = kernels_.Get(launch.function, launch.symbol);
  if (shut_down_.load(std::memory_order_relaxed) || !kernel.selected ||
      !tracker_.TakeWindowSlot()) {
    tracker_.Count(d);
    return -1;
  }
  if (!launch.decoded) {
    // Decided quiet by the caller just before a marker on another thread
    // opened a selected step: there are no parameters to measure.
    d = tracker_.Count(d);
    PushNote(d.launch, "kernel " + std::string(launch.symbol) +
                           " launched as step " + std::to_string(d.step) +
                           " began on another thread was not measured");
    return -1;
  }
  if (launch.stream_capturing) {
    d = tracker_.Count(d);
    // Measuring here would add our work to the user's graph; say so once a step.
    if (capturing_note_step_.exchange(d.step) != d.step) {
      PushNote(d.launch, "launches into a capturing stream (CUDA graph capture) are not measured in step " +
                             std::to_string(d.step));
    }
    return -1;
  }
  Scratch& s = ThreadScratch();
  ScanBuffers(launch.params, launch.layout, allocs_, &s.scanned, ranges_, &tensors_);
  BuildPlan(s.scanned, kernel, config_.min_bytes, &s.plan);

  PendingRecord p;
  p.kernel = &kernel;
  p.stream = launch.stream;
  p.grid = launch.grid;
  p.block = launch.block;
  p.buffers = s.plan.buffers;
  p.provenance = provenance::ForLaunch(kernel.symbol);
  p.want_before = at_enter && config_.outputs == settings::OutputsMode::kChanged && !s.plan.items.empty();
  s.dump = false;
  s.dropped = false;
  int64_t index;
  {
    // Numbering the launch under the lock that orders pending_ keeps the
    // records' `launch` rising with `seq` when many threads launch at once.
    std::lock_guard<std::mutex> lock(mu_);
    d = tracker_.Count(d);
    if (!d.selected) return -1;  // launches:N - another thread took the step's last slot
    p.decision = d;
    if (dumper_ != nullptr) {
      // The seq this record gets unless records before it are dropped.
      p.dump = dumper_->Plan(captured_.load(std::memory_order_relaxed), kernel, p.buffers,
                             p.want_before, &p.dump_note);
      s.dump = p.dump != nullptr;
    }
    captured_.fetch_add(1, std::memory_order_relaxed);
    index = static_cast<int64_t>(base_ + pending_.size());
    pending_.push_back(std::move(p));
  }
  if (index >= 0 && at_enter && config_.outputs == settings::OutputsMode::kChanged && !s.plan.items.empty()) {
    if (!device_->Enqueue(launch.stream, s.plan.items, static_cast<uint64_t>(index) * 2)) {
      MarkDropped(index);
      s.dropped = true;
    }
    // The inputs as the kernel will find them: queued before the kernel itself.
    if (s.dump && !device_->EnqueueCopy(launch.stream, s.plan.items, static_cast<uint64_t>(index) * 2)) {
      DumpCopyFailed(index, /*after=*/false);
    }
  }
  return index;
}

void Engine::MeasureAfter(const LaunchEvent& launch, int64_t index) {
  // A launch still in flight when the process shuts down: the device may be
  // gone already, and Shutdown has written this entry off.
  if (shut_down_.load(std::memory_order_acquire)) return;
  const MeasurementPlan& plan = ThreadScratch().plan;
  // Dropped whole at ENTER: no ring space for the half of a launch.
  if (ThreadScratch().dropped) return;
  if (plan.items.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<uint64_t>(index) >= base_) pending_[index - base_].has_after = true;
    return;
  }
  if (!device_->Enqueue(launch.stream, plan.items, static_cast<uint64_t>(index) * 2 + 1)) {
    MarkDropped(index);
  }
  if (ThreadScratch().dump &&
      !device_->EnqueueCopy(launch.stream, plan.items, static_cast<uint64_t>(index) * 2 + 1)) {
    DumpCopyFailed(index, /*after=*/true);
  }
}

void Engine::DumpCopyFailed(int64_t index, bool after) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<uint64_t>(index) < base_) return;
  PendingRecord& p = pending_[index - base_];
  if (!p.dump) return;
  --p.dump->outstanding;
  ++(after ? p.dump->unqueued_after : p.dump->unqueued_before);
}

void Engine::EnableDumps(int64_t rank) {
  if (config_.dump) dumper_ = std::make_unique<TensorDumper>(config_, rank);
}

void Engine::CollectCopies(bool wait) {
  if (dumper_ == nullptr) return;
  device_->PollCopies(
      [this](uint64_t ticket, size_t item, std::span<const uint8_t> bytes, bool failed) {
        LaunchDump* dump = nullptr;
        {
          std::lock_guard<std::mutex> lock(mu_);
          const uint64_t index = ticket >> 1;
          if (index < base_ || index >= base_ + pending_.size()) return;  // written off
          dump = pending_[index - base_].dump.get();
        }
        if (dump == nullptr) return;
        // Only this thread touches the dump's files; the lock guards the count
        // that Complete() reads on other threads.
        dumper_->WriteCopy(*dump, ticket & 1, item, bytes, failed);
        if (item + 1 >= dump->buffers.size()) {
          std::lock_guard<std::mutex> lock(mu_);
          --dump->outstanding;
        }
      },
      wait);
}

void Engine::MarkDropped(int64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<uint64_t>(index) < base_) return;
  PendingRecord& p = pending_[index - base_];
  if (!p.dropped) {
    p.dropped = true;
    p.drop_reason = "the device could not take the measurement (ring full or device error; see NUMTRACE_DEVICE_MEMORY)";
  }
}

// A dump the user asked for that never happened is said: a note in the
// trace and one stderr line, never silence.
void Engine::NoteUnreachedDumps(const TensorDumper& dumper) {
  // The seq the next record would have had, as the dump plans count it.
  std::string msg = dumper.ReportUnreached(captured_.load(std::memory_order_relaxed));
  if (msg.empty()) return;
  PushNote(tracker_.launches(), std::move(msg));
}

void Engine::PushNote(uint64_t launch, std::string msg) {
  NoteRecord n;
  n.launch = launch;
  n.msg = std::move(msg);
  PushNote(std::move(n));
}

void Engine::PushNote(NoteRecord note) {
  PendingRecord p;
  p.is_note = true;
  p.note = std::move(note);
  std::lock_guard<std::mutex> lock(mu_);
  pending_.push_back(std::move(p));
}

void Engine::TakeResult(uint64_t ticket, std::span<const BufferStats> stats, bool failed) {
  if (StepWatch::IsWatchTicket(ticket)) {
    if (watch_) watch_->OnResult(ticket, stats, failed);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t index = ticket >> 1;
  if (index < base_ || index >= base_ + pending_.size()) return;  // abandoned long ago
  PendingRecord& p = pending_[index - base_];
  if (failed) {  // never completes otherwise: every later record would wait for it
    if (!p.dropped) p.drop_reason = "the GPU reported an error for its measurement";
    p.dropped = true;
    return;
  }
  if (p.op) {
    for (size_t i = 0; i < stats.size(); ++i) {
      if (ticket & 1) {
        if (i < p.device_after.size()) p.op->buffers[p.device_after[i]].stats = stats[i];
      } else if (i < p.device_before.size()) {
        p.op_pre.emplace_back(p.device_before[i], stats[i]);
      }
    }
    ((ticket & 1) ? p.has_after : p.has_before) = true;
    return;
  }
  auto& dst = (ticket & 1) ? p.after : p.before;
  dst.assign(stats.begin(), stats.end());
  ((ticket & 1) ? p.has_after : p.has_before) = true;
}

void Engine::Pump() {
  std::lock_guard<std::mutex> pump_lock(pump_mu_);
  // Poll: finished measurements into their entries.
  const Device::ResultFn take = [this](uint64_t ticket, std::span<const BufferStats> stats, bool failed) {
    TakeResult(ticket, stats, failed);
  };
  device_->Poll(take);
  // Operator level: CUDA tensors measured on CUDA's device, when it joined
  // an engine started on the host.
  if (Device* d = op_device_.load(std::memory_order_acquire); d != nullptr && d != device_) d->Poll(take);
  // Collect: the dumps' copies, the watch digests.
  CollectCopies(/*wait=*/false);
  if (watch_) watch_->Collect(/*final=*/drained_.load(std::memory_order_acquire));
  // Build and write every entry whose turn has come, in launch order.
  for (PendingRecord& p : TakeComplete()) Write(p);
}

std::vector<PendingRecord> Engine::TakeComplete() {
  std::vector<PendingRecord> ready;
  std::lock_guard<std::mutex> lock(mu_);
  while (!pending_.empty() && pending_.front().Complete()) {
    ready.push_back(std::move(pending_.front()));
    pending_.pop_front();
    ++base_;
  }
  return ready;
}

void Engine::Write(PendingRecord& p) {
  if (p.is_note) {
    sink_->Push(std::move(p.note));
    return;
  }
  if (p.dropped) {
    if (p.dump) {
      NoteRecord note;
      note.launch = p.decision.launch;
      note.msg = "tensor dump of seq " + std::to_string(p.dump->seq) +
                 " has no sidecar: the launch's record was not written";
      sink_->Push(std::move(note));
    }
    const uint64_t n = dropped_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n <= kDropNotesMax) sink_->Push(DropNote(p, /*last=*/n == kDropNotesMax));
    return;
  }
  KernelRecord r = p.op ? BuildOpRecord(p) : BuildKernelRecord(p);
  // The dump's notes follow its record; the dumper reads the record's
  // buffers and roles to write the sidecar.
  std::vector<NoteRecord> dump_notes;
  if (p.dump) {
    dump_notes = dumper_->Finish(*p.dump, r);
    if (p.dump->seq != emitted_) {
      NoteRecord n;
      n.launch = r.launch;
      n.msg = "tensor dump of seq " + std::to_string(p.dump->seq) + " is the record this trace numbers seq " +
              std::to_string(emitted_) + " (records were dropped before it)";
      dump_notes.push_back(std::move(n));
    }
  }
  if (!p.dump_note.empty()) {
    NoteRecord n;
    n.launch = r.launch;
    n.msg = std::move(p.dump_note);
    dump_notes.push_back(std::move(n));
  }
  // The trace's one seq counter: a record the sink refuses gives its seq
  // to the next, so the numbering stays dense.
  r.seq = emitted_;
  if (sink_->Push(std::move(r))) ++emitted_;
  for (NoteRecord& n : dump_notes) sink_->Push(std::move(n));
}

void Engine::StepEnded(int64_t step, int64_t as) {
  if (watch_ && step >= 0) {
    watch_->StepEnded(step, as);
    // Digests use the oracle's ranges on every step: memory may be freed and reused now.
    if (ranges_ != nullptr && !tracker_.IsSelected(step)) ranges_->NewStep();
    // Every launch of a watched step was decoded, so the kernel activity
    // check noted each one: it must settle per step here too, or with
    // --watch alone (no step selected) its ids and records grow for the
    // whole job (review round 4, finding 5).
    step_ended_.store(true, std::memory_order_release);
    sink_->Flush();
  }
  if (step >= 0 && tracker_.IsSelected(step)) {
    if (tensor_map_expected_.load(std::memory_order_relaxed) && !tensor_map_said_.load()) {
      OnTensorMapStatus(TensorMapState::kNotAttached, "nothing reported by the end of step " + std::to_string(step) +
                               " (are the PyTorch hooks on PYTHONPATH? numtrace run puts them there)");
    }
    if (ranges_ != nullptr) ranges_->NewStep();  // memory may be freed and reused now
    step_ended_.store(true, std::memory_order_release);
    sink_->Flush();
  }
}

void Engine::OnAlloc(const AllocEvent& alloc) { allocs_.Insert(alloc.address, alloc.bytes, alloc.kind); }

void Engine::OnFree(const FreeEvent& free) {
  if (ranges_ != nullptr) ranges_->Forget(free.address, free.bytes);
  if (free.kind == AllocKind::kVirtualMap && free.bytes != 0) {
    allocs_.EraseRange(free.address, free.bytes);
    return;
  }
  if (!allocs_.Erase(free.address) && free.bytes != 0) allocs_.EraseRange(free.address, free.bytes);
}

void Engine::OnPoolTrim() {
  // Which ranges went is unknown: the step's cached answers are asked again.
  if (ranges_ != nullptr) ranges_->NewStep();
}

void Engine::OnTensorEvent(const TensorEvent& event) {
  if (tensors_.Apply(event)) CaptureCounters::Get().Add(Counter::kTensorEvents);
}

void Engine::OnTensorMapStatus(TensorMapState state, std::string_view detail) {
  if (tensor_map_said_.exchange(true) || shut_down_.load(std::memory_order_acquire)) return;  // once per process
  detail = detail.substr(0, 1024);
  if (state == TensorMapState::kNotAttached) {
    log::Error("the PyTorch tensor map is not attached ({}): buffers in the caching allocator's segments are "
               "measured as whole segments; --allocator async avoids it (not with CUDA graph trees)",
               OneLine(detail, 300));
  }
  // Said once in the trace, whatever the outcome: a reader must be able to
  // tell tensors from allocator segments (analyzer: capture_warnings.cc).
  NoteRecord n;
  n.launch = tracker_.launches();
  n.level = state == TensorMapState::kNotAttached ? "warn" : "info";
  n.kind = std::string(kNoteTensorMap);
  n.name = std::string(TensorMapStateName(state));
  n.msg = "tensor map (PyTorch caching allocator): ";
  n.msg += state == TensorMapState::kAttached    ? "attached"
           : state == TensorMapState::kNotNeeded ? "not needed"
                                                 : "NOT attached, buffers in its segments are whole segments";
  if (!detail.empty()) n.msg += "; " + std::string(detail);
  PushNote(std::move(n));
}

void Engine::OnGraphLaunch(const GraphLaunchEvent& graph) {
  if (shut_down_.load(std::memory_order_relaxed)) return;
  const int64_t step = config_.step_mode == settings::StepMode::kLaunches
                           ? static_cast<int64_t>(tracker_.launches() / config_.launches_per_step)
                           : tracker_.current_step();
  if (step < 0) return;
  if (!tracker_.IsSelected(step)) {
    // Watch mode digests no graph's kernels either: say so, once a step.
    if (watch_ == nullptr || graph_note_step_.exchange(step) == step) return;
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                "CUDA graph 0x%" PRIx64 " launched on stream %" PRIu64 " in step %" PRId64
                ": the kernels inside it were not measured",
                graph.graph_exec, graph.stream, step);
  PushNote(tracker_.launches(), buf);
}

int64_t Engine::OnOpBefore(std::span<const OpTensor> tensors, uint64_t stream) {
  if (config_.level != CaptureLevel::kOps || shut_down_.load(std::memory_order_relaxed)) return -1;
  LaunchDecision d = tracker_.Decide(/*starts_step=*/false);
  if (!d.selected) {
    const int64_t step = tracker_.Count(d).step;
    // Watch mode digests the call at OnOpAfter; the token carries its step.
    return watch_ && step >= 0 ? static_cast<int64_t>(kWatchOpToken | static_cast<uint64_t>(step)) : -1;
  }
  PendingRecord p;
  p.op = std::make_unique<KernelRecord>();
  p.op->op_level = true;
  p.provenance = provenance::Current();
  int64_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    d = tracker_.Count(d);
    if (!d.selected) return -1;
    p.decision = d;
    p.op->launch = d.launch;
    if (d.step >= 0) p.op->step = d.step;
    captured_.fetch_add(1, std::memory_order_relaxed);
    index = static_cast<int64_t>(base_ + pending_.size());
    pending_.push_back(std::move(p));
  }
  MeasureOp(index, tensors, stream, /*before=*/true);
  return index;
}

void Engine::OnOpAfter(int64_t token, std::string_view name, std::span<const OpTensor> tensors, uint64_t stream) {
  if (token < 0 || shut_down_.load(std::memory_order_acquire)) return;
  if (static_cast<uint64_t>(token) & kWatchOpToken) {
    WatchOp(static_cast<int64_t>(static_cast<uint64_t>(token) & ~kWatchOpToken), name, tensors, stream);
    return;
  }
  int64_t step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<uint64_t>(token) < base_ || static_cast<uint64_t>(token) >= base_ + pending_.size()) return;
    PendingRecord& p = pending_[token - base_];
    if (!p.op) return;
    p.op->name = std::string(name);
    std::move(p.provenance).ApplyTo(p.op.get());
    p.op->op = p.op->name;
    step = p.decision.step;
  }
  MeasureOp(token, tensors, stream, /*before=*/false);
  // A step captured in full is digested too, as at kernel level.
  WatchOp(step, name, tensors, stream);
}

void Engine::WatchOp(int64_t step, std::string_view name, std::span<const OpTensor> tensors, uint64_t stream) {
  if (!watch_ || step < 0) return;
  // The op record's buffers in its order (MeasureOp): each tensor whole
  // (`full`) or over its sample windows, CPU ones hashed here.
  std::vector<uint64_t> hashes;
  std::vector<uint32_t> device_at;
  std::vector<MeasureItem> items;
  bool nonfinite = false, lost = false;
  Device* device = op_device_.load(std::memory_order_acquire);
  for (const OpTensor& t : tensors) {
    if (t.device == OpDevice::kOther) {
      SayOpUnmeasured(OpDeviceName(t));
      continue;
    }
    const uint64_t bytes = ElementsOf(t) * t.element_size;
    if (t.device == OpDevice::kCpu) {
      const uint8_t* data = CpuBytes(t, bytes);
      const MeasureItem whole{reinterpret_cast<uint64_t>(data), bytes, t.dtype};
      std::vector<MeasureItem> pieces;
      watch_->Sample(std::span<const MeasureItem>(&whole, 1), &pieces);
      for (const MeasureItem& m : pieces) {
        const BufferStats s =
            ReduceHost(reinterpret_cast<const void*>(m.address), m.bytes, m.dtype, HostReduceThreads());
        hashes.push_back(s.hash);
        nonfinite = nonfinite || NonFinite(s);
      }
    } else if (device != nullptr && IsContiguous(t)) {
      const size_t first = items.size();
      watch_->Sample(std::vector<MeasureItem>{{t.data, bytes, t.dtype}}, &items);
      for (size_t i = first; i < items.size(); ++i) {
        device_at.push_back(static_cast<uint32_t>(hashes.size()));
        hashes.push_back(0);
      }
    } else {
      // Its digest would be unknown: the whole call counts as lost (`lost`).
      lost = true;
      SayOpUnmeasured(OpDeviceName(t) + (device == nullptr ? " (CUDA was not started under numtrace" : " (non-contiguous") +
                      "; watch mode counts their calls as lost)");
    }
  }
  watch_->OnOp(step, name, std::move(hashes), nonfinite, lost, std::move(device_at), device, stream, items);
}

void Engine::SayOpUnmeasured(const std::string& what) {
  if (op_unmeasured_said_.exchange(true)) return;
  log::Warn("operator level: tensors on {} are not measured (left out of the records)", what);
  PushNote(tracker_.launches(), "operator level: tensors on " + what + " are not measured (left out of the records)");
}

void Engine::MeasureOp(int64_t index, std::span<const OpTensor> tensors, uint64_t stream, bool before) {
  // Measured outside the lock (the host reduction takes time); the pending
  // entry is only touched under it.
  std::vector<BufferRecord> measured;     // in tensor (= schema) order
  std::vector<uint32_t> on_device;        // indices into `measured` queued on the op device
  std::vector<MeasureItem> items;
  std::string unmeasured;
  Device* device = op_device_.load(std::memory_order_acquire);
  for (const OpTensor& t : tensors) {
    if (before && !t.written) continue;
    if (t.device == OpDevice::kOther) {
      if (unmeasured.empty()) unmeasured = OpDeviceName(t);
      continue;
    }
    BufferRecord b;
    b.arg = t.arg;
    b.addr = t.storage;
    b.offset = t.offset;
    b.bytes = ElementsOf(t) * t.element_size;
    b.dtype = t.dtype;
    b.dtype_from = DTypeSource::kSignature;
    b.role = t.written ? Role::kOut : Role::kIn;
    b.shape.emplace(t.shape.begin(), t.shape.end());
    b.device = OpDeviceName(t);
    if (t.device == OpDevice::kCpu) {
      b.stats = MeasureCpuTensor(t);
    } else if (device != nullptr && IsContiguous(t)) {
      items.push_back({t.data, b.bytes, t.dtype});
      on_device.push_back(static_cast<uint32_t>(measured.size()));
    } else {
      if (unmeasured.empty()) {
        unmeasured = b.device + (device == nullptr ? " (CUDA was not started under numtrace)" : " (non-contiguous)");
      }
      continue;
    }
    measured.push_back(std::move(b));
  }
  if (!unmeasured.empty()) SayOpUnmeasured(unmeasured);
  const bool queued =
      items.empty() || device->Enqueue(stream, items, static_cast<uint64_t>(index) * 2 + (before ? 0 : 1));
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<uint64_t>(index) < base_) return;
  PendingRecord& p = pending_[index - base_];
  if (before) {
    // CPU `pre`s now; those on the device come through Pump.
    size_t next_device = 0;
    for (size_t i = 0; i < measured.size(); ++i) {
      if (next_device < on_device.size() && on_device[next_device] == i) {
        p.device_before.push_back(measured[i].arg);
        ++next_device;
      } else {
        p.op_pre.emplace_back(measured[i].arg, measured[i].stats);
      }
    }
    p.want_before = !on_device.empty();
  } else {
    p.op->buffers = std::move(measured);
    p.device_after = std::move(on_device);
    p.has_after = p.device_after.empty();
  }
  if (!queued) {
    p.dropped = true;
    p.drop_reason = "the device could not take the measurement (ring full or device error; see NUMTRACE_DEVICE_MEMORY)";
  }
}

void Engine::OnStepMark() { StepEnded(tracker_.OnStepMark()); }

void Engine::OnStepMarkTo(int64_t next) {
  const StepTracker::Mark m = tracker_.OnStepMark(next);
  if (m.ended_as != m.ended && tracker_.IsSelected(m.ended_as)) {
    // Its launches ran before the job said its number (a resumed job's first
    // step): they were counted under another one, so none was captured.
    PushNote(tracker_.launches(), "step " + std::to_string(m.ended_as) + " was not captured in full: its number (the " +
                                      "job's own step count) came only at its end, after it ran as step " +
                                      std::to_string(m.ended) + " (the first step of a resumed run)");
  }
  StepEnded(m.ended, m.ended_as);
}
void Engine::OnCaptureBegin() { StepEnded(tracker_.OnCaptureBegin()); }
void Engine::OnCaptureEnd() { StepEnded(tracker_.OnCaptureEnd()); }
void Engine::OnProfilerStart() { StepEnded(tracker_.OnProfilerStart()); }
void Engine::OnProfilerStop() { StepEnded(tracker_.OnProfilerStop()); }
void Engine::OnRangePush(std::string_view name) { StepEnded(tracker_.OnRangePush(name)); }
void Engine::OnRangePop() { StepEnded(tracker_.OnRangePop()); }

void Engine::OnWarning(std::string_view msg) {
  if (shut_down_.load(std::memory_order_relaxed)) return;
  PushNote(tracker_.launches(), std::string(msg));
}

void Engine::OnUnmeasured(std::string_view name, uint64_t count, bool in_graph) {
  if (count == 0 || shut_down_.load(std::memory_order_relaxed)) return;
  unmeasured_.fetch_add(count, std::memory_order_relaxed);
  NoteRecord n;
  n.kind = std::string(kNoteUnmeasured);
  n.name = std::string(name);
  n.count = count;
  n.msg = "kernel " + std::string(name) + " ran " + std::to_string(count) + (count == 1 ? " time" : " times") +
          " in captured steps without being measured" +
          (in_graph ? " (inside CUDA graph launches)" : " (its launch raised no callback numtrace handles)");
  PushNote(std::move(n));
}

bool Engine::Annotate(std::string_view kernel_name, std::string_view dtypes, std::string* error) {
  return annotations_.Add(kernel_name, dtypes, error);
}

void Engine::Shutdown() {
  if (shut_down_.exchange(true)) return;
  device_->Drain();
  if (Device* d = op_device_.load(std::memory_order_acquire); d != nullptr && d != device_) d->Drain();
  drained_.store(true, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    CollectCopies(/*wait=*/true);
  }
  Pump();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (PendingRecord& p : pending_) {
      if (!p.Complete()) {
        p.dropped = true;
        p.drop_reason = "its measurement had not completed at exit";
      }
    }
  }
  if (dumper_ != nullptr) NoteUnreachedDumps(*dumper_);  // tensor_dumper.h
  Pump();
  sink_->SetFooterExtras(unmeasured_.load(), CaptureCounters::Get().Snapshot());
  sink_->Finish(tracker_.launches(), dropped_.load());
}

EngineCounters Engine::counters() const {
  return {tracker_.launches(), captured_.load(), dropped_.load()};
}

}  // namespace numtrace::shim
