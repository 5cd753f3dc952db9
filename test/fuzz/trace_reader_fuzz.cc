// File: test/fuzz/trace_reader_fuzz.cc
//
// libFuzzer target: any bytes given to the trace-format-v1 reader must yield
// a Trace or a one-line error naming the path, never a crash, a sanitizer
// report or a hang. Run by scripts/fuzz.sh; seeds in corpus/trace_reader/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analyzer/read/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<numtrace::analyzer::Trace> t =
      numtrace::analyzer::ReadTraceBytes(bytes, "fuzz/rank_0.ntrace.jsonl", numtrace::analyzer::FindImporter("numtrace"));
  if (t.ok()) {
    // The model's invariants that later stages rely on.
    const numtrace::analyzer::Trace& trace = *t;
    for (size_t i = 0; i < trace.kernels.size(); ++i) {
      const auto& k = trace.kernels[i];
      if (k.seq != i || size_t{k.first_buffer} + k.buffer_count > trace.buffers.size() ||
          k.name >= trace.strings.size() || k.demangled >= trace.strings.size()) {
        std::abort();
      }
    }
  } else {
    std::string_view msg(t.status().message().data(), t.status().message().size());
    if (msg.find('\n') != std::string_view::npos || msg.rfind("fuzz/rank_0.ntrace.jsonl", 0) != 0) {
      std::abort();  // errors are one line and name the file
    }
  }
  return 0;
}
