// File: test/analyzer/trace_builder.h
//
// Builds analyzer::Trace objects in tests without a trace file: kernels by
// name, buffers with stats chosen by the test. Content is summarised by a
// "content id": equal ids give equal hashes and equal stats, different ids
// give stats far apart, so tests can say "this kernel writes what that one
// wrote" in one number.
//
// Example:
//   TraceBuilder tb("a.jsonl");
//   tb.Add("triton_poi_fused_add_0", {In(4096), Out(/*content=*/7)});
//   Trace t = tb.Build();
#ifndef NUMTRACE_TEST_ANALYZER_TRACE_BUILDER_H_
#define NUMTRACE_TEST_ANALYZER_TRACE_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer::testing {

// An output buffer of n float32 elements whose contents are "content".
inline Buffer Out(uint64_t content, uint64_t n = 1024, DType dtype = DType::kF32, uint32_t arg = 0) {
  Buffer b;
  b.arg = arg;
  b.bytes = n * DTypeSize(dtype);
  b.dtype = dtype;
  b.role = Role::kOut;
  b.stats.n = n;
  b.stats.hash = 0x9e3779b97f4a7c15ULL * (content + 1);
  b.stats.has_range = true;
  double scale = 1.0 + static_cast<double>(content % 997);
  b.stats.min = -scale;
  b.stats.max = scale;
  b.stats.l2 = scale * 10;
  b.stats.l1 = scale * 100;
  b.stats.sum = scale * 3;
  return b;
}

// An input buffer (role in) of the given size.
inline Buffer In(uint64_t bytes, DType dtype = DType::kF32, uint32_t arg = 1) {
  Buffer b;
  b.arg = arg;
  b.bytes = bytes;
  b.dtype = dtype;
  b.role = Role::kIn;
  b.stats.n = bytes / DTypeSize(dtype);
  b.stats.hash = bytes * 31 + 7;
  return b;
}

class TraceBuilder {
 public:
  explicit TraceBuilder(std::string path = "trace.jsonl") {
    trace_.path = path;
    trace_.label = std::move(path);
  }

  uint32_t Add(std::string_view name, std::vector<Buffer> buffers = {}) {
    Kernel k;
    k.seq = trace_.kernels.size();
    k.launch = k.seq;
    k.name = trace_.strings.Intern(name);
    k.demangled = k.name;
    k.first_buffer = static_cast<uint32_t>(trace_.buffers.size());
    k.buffer_count = static_cast<uint32_t>(buffers.size());
    trace_.buffers.insert(trace_.buffers.end(), buffers.begin(), buffers.end());
    trace_.kernels.push_back(k);
    return static_cast<uint32_t>(k.seq);
  }

  // An operator-level record (docs/format.md, "Operator-level records"),
  // of `phase` when one is given.
  uint32_t AddOp(std::string_view name, std::vector<Buffer> buffers = {}, Phase phase = Phase::kNone) {
    const uint32_t k = Add(name, std::move(buffers));
    trace_.kernels.back().level = RecordLevel::kOp;
    if (phase != Phase::kNone) {
      KernelProvenance p;
      p.phase = phase;
      trace_.SetProvenance(k, p);
    }
    return k;
  }

  Trace& trace() { return trace_; }
  Trace Build() { return std::move(trace_); }

 private:
  Trace trace_;
};

}  // namespace numtrace::analyzer::testing

#endif  // NUMTRACE_TEST_ANALYZER_TRACE_BUILDER_H_
