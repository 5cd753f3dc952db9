// File: bench/shim/engine_bench.cc
//
// What the engine costs the application's launch path, and how fast the
// writer drains. Targets (docs/configuration.md): a launch outside the
// captured steps <= 50 ns; a captured launch <= 2 us of host time excluding
// the device's own work (a no-op Device here); writer >= 100k records/s.
//
// Example:
//   build/bin/numtrace_engine_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/settings/config.h"
#include "shim/engine/engine.h"
#include "shim/writer/trace_writer.h"

namespace numtrace::shim {
namespace {

// Completes every measurement at once with empty stats: only host cost remains.
class NoopDevice : public Device {
 public:
  bool Enqueue(uint64_t, std::span<const MeasureItem> items, uint64_t ticket) override {
    std::lock_guard<std::mutex> lock(mu_);
    done_.push_back({ticket, items.size()});
    return true;
  }
  void Poll(const ResultFn& fn) override {
    std::vector<std::pair<uint64_t, size_t>> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done.swap(done_);
    }
    BufferStats zeros[64];
    for (auto [ticket, n] : done) fn(ticket, std::span<const BufferStats>(zeros, std::min<size_t>(n, 64)), false);
  }
  void Drain() override {}

 private:
  std::mutex mu_;
  std::vector<std::pair<uint64_t, size_t>> done_;
};

class NullSink : public RecordSink {
 public:
  bool Push(KernelRecord) override { return true; }
  bool Push(NoteRecord) override { return true; }
  void Flush() override {}
  void Finish(uint64_t, uint64_t) override {}
};

settings::Config MakeConfig(const char* steps) {
  std::string error;
  auto c = settings::ParseConfig([steps](const char* n) -> const char* {
    return std::string_view(n) == "NUMTRACE_STEPS" ? steps : nullptr;
  }, &error);
  return *c;
}

// A launch like an elementwise PyTorch kernel: 3 pointers, a size, and a
// 64-byte struct of strides.
struct Launch {
  Launch() {
    for (int i = 0; i < 3; ++i) {
      const uint64_t p = 0x7f00'0000'0000ull + i * (1ull << 24);
      std::memcpy(bytes + 8 * i, &p, 8);
      slots[i] = {static_cast<uint32_t>(8 * i), 8};
    }
    slots[3] = {24, 8};
    slots[4] = {32, 64};
    ev.symbol = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";
    ev.function = 0x1234;
    ev.params = std::span<const uint8_t>(bytes, sizeof(bytes));
    ev.layout = std::span<const ParamSlot>(slots, 5);
  }
  uint8_t bytes[96] = {};
  ParamSlot slots[5];
  LaunchEvent ev;
};

void RegisterAllocs(Engine& e) {
  for (int i = 0; i < 1000; ++i) {
    e.OnAlloc({0x7f00'0000'0000ull + i * (1ull << 24), 1 << 20, AllocKind::kStreamOrdered, 0});
  }
}

void BM_NonCapturedLaunch(benchmark::State& state) {
  static settings::Config config = MakeConfig("1000000");
  static NoopDevice device;
  static NullSink sink;
  static Engine* engine = nullptr;
  if (state.thread_index() == 0) engine = new Engine(config, &device, &sink);
  Launch l;
  for (auto _ : state) {
    engine->OnLaunchEnter(l.ev);
    engine->OnLaunch(l.ev);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete engine;
    engine = nullptr;
  }
}
BENCHMARK(BM_NonCapturedLaunch)->Threads(1)->Threads(2)->UseRealTime();

// The writer thread's job, off the launch path: Pump every 200 us until Stop.
class WriterPump {
 public:
  explicit WriterPump(Engine& engine)
      : thread_([this, &engine] {
          while (!stop_.load()) {
            engine.Pump();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
        }) {}
  ~WriterPump() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Arg 0: pointers in driver allocations (one per tensor); 1: in blocks the
// tensor map knows (RegisterTensors below).
void RegisterTensors(Engine& e);
void BM_CapturedLaunch(benchmark::State& state) {
  settings::Config config = MakeConfig("all");
  NoopDevice device;
  NullSink sink;
  Engine engine(config, &device, &sink);
  if (state.range(0) == 0) {
    RegisterAllocs(engine);
  } else {
    RegisterTensors(engine);
  }
  WriterPump pump(engine);
  Launch l;
  for (auto _ : state) {
    engine.OnLaunchEnter(l.ev);
    engine.OnLaunch(l.ev);
  }
  pump.Stop();
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "driver allocations" : "tensor map");
}
BENCHMARK(BM_CapturedLaunch)->Arg(0)->Arg(1);

// The tensor map (NUMTRACE_ALLOCATOR=caching): PyTorch's caching allocator
// as the hooks report it - 1000 segments of 16 MiB from the driver, each
// cut into 16 blocks. BM_TensorEvent: one block handed out and freed, the
// cost added to each PyTorch allocation (under its allocator lock) with
// 16,000 blocks live. BM_CapturedLaunch/1 resolves its pointers through
// the same map.
void RegisterTensors(Engine& e) {
  for (int i = 0; i < 1000; ++i) {
    const uint64_t seg = 0x7f00'0000'0000ull + i * (1ull << 24);
    e.OnAlloc({seg, 1ull << 24, AllocKind::kPlain, 0});
    e.OnTensorEvent({TensorAction::kSegmentAlloc, 0, seg, 1ull << 24});
    for (int b = 0; b < 16; ++b) e.OnTensorEvent({TensorAction::kAlloc, 0, seg + b * (1ull << 20), 1000000});
  }
}

void BM_TensorEvent(benchmark::State& state) {
  settings::Config config = MakeConfig("1000000");
  NoopDevice device;
  NullSink sink;
  Engine engine(config, &device, &sink);
  RegisterTensors(engine);
  const uint64_t at = 0x7f00'0000'0000ull + 500 * (1ull << 24) + 3 * (1ull << 20);
  engine.OnTensorEvent({TensorAction::kFree, 0, at, 0});
  for (auto _ : state) {
    engine.OnTensorEvent({TensorAction::kAlloc, 0, at, 1000000});
    engine.OnTensorEvent({TensorAction::kFree, 0, at, 0});
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_TensorEvent);


// Watch mode (docs/benchmarks.md): every launch digested - a buffer scan, a
// measurement queued on the launch's stream and a slot in the launch order -
// against BM_NonCapturedLaunch. Target: at most 2 us over it. Arg 0: full,
// 1: sampled (8 windows per 1 MiB buffer instead of 1 item).
void BM_WatchedLaunch(benchmark::State& state) {
  const char* mode = state.range(0) == 0 ? "full" : "sampled";
  std::string error;
  static settings::Config config;
  config = *settings::ParseConfig([mode](const char* n) -> const char* {
    return std::string_view(n) == "NUMTRACE_WATCH" ? mode : nullptr;
  }, &error);
  NoopDevice device;
  NullSink sink;
  Engine engine(config, &device, &sink);
  RegisterAllocs(engine);
  WriterPump pump(engine);
  Launch l;
  uint64_t i = 0;
  for (auto _ : state) {
    engine.OnLaunchEnter(l.ev);
    engine.OnLaunch(l.ev);
    if (++i % 5000 == 0) engine.OnStepMark();  // a step of 5,000 launches
  }
  pump.Stop();
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(mode);
}
BENCHMARK(BM_WatchedLaunch)->Arg(0)->Arg(1);

void BM_WriterThroughput(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("numtrace_bench_" + std::to_string(getpid()));
  KernelRecord proto;
  proto.name = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";
  proto.demangled = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
  proto.launch = 1;
  proto.step = 2;
  proto.stream = 7;
  proto.grid = std::array<uint32_t, 3>{1024, 1, 1};
  proto.block = std::array<uint32_t, 3>{128, 1, 1};
  for (int i = 0; i < 3; ++i) {
    BufferRecord b;
    b.arg = i;
    b.addr = 0x7f3a40000000ull + i;
    b.bytes = 8388608;
    b.dtype = DType::kF32;
    b.role = i == 2 ? Role::kOut : Role::kIn;
    b.stats = {2097152, 0, 0, 0, 17, 0, true, -6.15625, 7.03125, 12.5, 1021337.25, 643.211, 0x9f3a5c0d12e4b788ull};
    b.dtype_from = DTypeSource::kName;
    proto.buffers.push_back(b);
  }
  const int64_t n = state.range(0);
  for (auto _ : state) {
    std::filesystem::remove_all(dir);
    TraceWriterOptions o;
    o.output_dir = dir.string();
    o.queue_records = n + 1;
    o.period = std::chrono::milliseconds(2);
    TraceWriter w(o);
    for (int64_t i = 0; i < n; ++i) w.Push(proto);
    w.Finish(n, 0);
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_WriterThroughput)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace numtrace::shim

BENCHMARK_MAIN();
