// File: test/analyzer/read/trace_text.h
//
// Builds trace-format-v1 text for the reader tests through the real JSONL
// writer, so a round trip checks the reader against what the shim writes.
//
// Example:
//   std::string text = TraceText({MakeKernel(0), MakeKernel(1)});  // header + 2 + footer
#ifndef NUMTRACE_TEST_ANALYZER_READ_TRACE_TEXT_H_
#define NUMTRACE_TEST_ANALYZER_READ_TRACE_TEXT_H_

#include <string>
#include <vector>

#include "common/format/jsonl_writer.h"
#include "common/format/records.h"

namespace numtrace::analyzer::testing {

inline TraceHeader MakeHeader(std::string label = "A", int64_t rank = 0) {
  TraceHeader h;
  h.producer = "libnumtrace test";
  RunInfo run;
  run.label = std::move(label);
  run.argv = {"python", "train.py", "--lr=\"1e-3\""};
  run.pid = 4242;
  run.rank = rank;
  run.world_size = 8;
  run.host = "node7";
  run.start_time = "2026-11-29T11:00:00Z";
  h.run = run;
  h.device = DeviceInfo{0, "NVIDIA H200", "9.0", "580.159", "13.0"};
  h.capture = CaptureInfo{{2, 3}, "changed", "all kernels", {{"NUMTRACE_STEPS", "2-3"}, {"NUMTRACE_KERNEL", "a\"b;c"}}, ""};
  return h;
}

inline KernelRecord MakeKernel(uint64_t seq) {
  KernelRecord k;
  k.seq = seq;
  k.launch = 1000 + seq;
  k.step = 2;
  k.name = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_";
  k.demangled = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, T0, T1)";
  k.stream = 7;
  k.grid = {{1024, 1, 1}};
  k.block = {{128, 1, 1}};
  BufferRecord b;
  b.arg = 1;
  b.addr = 0x7f3a40000000 + seq * 0x1000;
  b.offset = 16;
  b.bytes = 8388608;
  b.dtype = DType::kBF16;
  b.dtype_from = DTypeSource::kName;
  b.role = Role::kOut;
  b.stats.n = 4194304;
  b.stats.zero = 17;
  b.stats.has_range = true;
  b.stats.min = -6.15625;
  b.stats.max = 7.03125;
  b.stats.sum = 0.1 * static_cast<double>(seq + 1);
  b.stats.l1 = 1.0 / 3.0;
  b.stats.l2 = 643.211;
  b.stats.hash = 0x9f3a5c0d12e4b788 ^ seq;
  k.buffers.push_back(b);
  return k;
}

inline std::string TraceText(const std::vector<KernelRecord>& kernels, bool footer = true,
                             const TraceHeader& header = MakeHeader()) {
  std::string out;
  AppendJsonLine(header, &out);
  for (const KernelRecord& k : kernels) AppendJsonLine(k, &out);
  if (footer) {
    FooterRecord f;
    f.kernels = kernels.size();
    f.launches = kernels.size() + 5;
    f.dropped = 1;
    f.end_time = "2026-11-29T11:05:00Z";
    AppendJsonLine(f, &out);
  }
  return out;
}

inline std::vector<KernelRecord> MakeKernels(size_t n) {
  std::vector<KernelRecord> v;
  for (size_t i = 0; i < n; ++i) v.push_back(MakeKernel(i));
  return v;
}

}  // namespace numtrace::analyzer::testing

#endif  // NUMTRACE_TEST_ANALYZER_READ_TRACE_TEXT_H_
