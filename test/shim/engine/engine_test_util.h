// File: test/shim/engine/engine_test_util.h
//
// Helpers for engine tests: an in-memory RecordSink, a builder of launch
// events laid out exactly as the CUPTI layer packs them (parameter bytes at
// cuFuncGetParamInfo offsets), and (from test/common/settings/map_env.h)
// a getenv over a map.
//
// Example:
//   LaunchBuilder b("_Z3addPfS_", 0x1000);
//   b.Pointer(a.data()).Pointer(c.data()).U32(n);
//   engine.OnLaunchEnter(b.event()); engine.OnLaunch(b.event());
#ifndef NUMTRACE_TEST_SHIM_ENGINE_ENGINE_TEST_UTIL_H_
#define NUMTRACE_TEST_SHIM_ENGINE_ENGINE_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/format/records.h"
#include "shim/engine/events.h"
#include "shim/writer/record_sink.h"
#include "test/common/settings/map_env.h"

namespace numtrace::shim::testing {

class MemorySink : public RecordSink {
 public:
  bool Push(KernelRecord r) override {
    std::lock_guard<std::mutex> lock(mu);
    kernels.push_back(std::move(r));  // seq as the engine numbered it
    order.push_back('k');
    return true;
  }
  bool Push(NoteRecord n) override {
    std::lock_guard<std::mutex> lock(mu);
    notes.push_back(std::move(n));
    order.push_back('n');
    return true;
  }
  void Flush() override { ++flushes; }
  void Finish(uint64_t l, uint64_t d) override {
    finished = true;
    launches = l;
    dropped = d;
  }
  void SetFooterExtras(uint64_t u, std::vector<std::pair<std::string, uint64_t>> c) override {
    unmeasured = u;
    counters = std::move(c);
  }
  uint64_t unmeasured = 0;
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::mutex mu;
  std::vector<KernelRecord> kernels;
  std::vector<NoteRecord> notes;
  std::string order;
  int flushes = 0;
  bool finished = false;
  uint64_t launches = 0, dropped = 0;
};

// A sink that keeps watch mode's records too.
class WatchSink : public MemorySink {
 public:
  bool Push(KernelRecord r) override { return MemorySink::Push(std::move(r)); }
  bool Push(NoteRecord n) override { return MemorySink::Push(std::move(n)); }
  bool Push(DigestRecord d) override {
    digests.push_back(std::move(d));
    return true;
  }
  bool Push(KernelNameRecord n) override {
    names.push_back(std::move(n));
    return true;
  }
  std::vector<DigestRecord> digests;
  std::vector<KernelNameRecord> names;
};

class LaunchBuilder {
 public:
  LaunchBuilder(std::string symbol, uint64_t function) : symbol_(std::move(symbol)) {
    ev_.function = function;
  }
  LaunchBuilder& Pointer(const void* p) { return Raw(&p, 8, 8); }
  LaunchBuilder& U64(uint64_t v) { return Raw(&v, 8, 8); }
  LaunchBuilder& U32(uint32_t v) { return Raw(&v, 4, 4); }
  // A by-value struct parameter (bytes as given, 8-byte aligned).
  LaunchBuilder& Struct(const void* data, uint32_t size) { return Raw(data, size, 8); }
  LaunchBuilder& Stream(uint64_t s) { ev_.stream = s; return *this; }
  LaunchBuilder& Capturing(bool c) { ev_.stream_capturing = c; return *this; }
  LaunchBuilder& Raw(const void* data, uint32_t size, uint32_t align) {
    uint32_t at = (static_cast<uint32_t>(bytes_.size()) + align - 1) / align * align;
    bytes_.resize(at + size);
    std::memcpy(bytes_.data() + at, data, size);
    slots_.push_back({at, size});
    return *this;
  }
  const LaunchEvent& event() {
    ev_.symbol = symbol_;
    ev_.params = bytes_;
    ev_.layout = slots_;
    return ev_;
  }

 private:
  std::string symbol_;
  std::vector<uint8_t> bytes_;
  std::vector<ParamSlot> slots_;
  LaunchEvent ev_;
};

// The settings tests' getenv over a map (test/common/settings/map_env.h).
using settings::testing::ConfigFrom;
using settings::testing::MapEnv;

}  // namespace numtrace::shim::testing

#endif  // NUMTRACE_TEST_SHIM_ENGINE_ENGINE_TEST_UTIL_H_
