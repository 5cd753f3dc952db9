// File: shim/writer/record_sink.h
//
// Where the engine hands finished records, in launch order. TraceWriter
// (trace_writer.h) is the real one: bounded, background thread, JSONL file.
// Tests use an in-memory sink. The engine numbers kernel records (`seq`, the
// one counter of it): a record the sink refuses (Push false) gives its seq
// to the next one, so a drop leaves no hole in the numbering.
//
// Example:
//   sink->Push(std::move(kernel_record));  // false: dropped (queue full)
//   sink->Flush();                         // step end: write what is queued
//   sink->Finish(/*launches=*/9000, /*dropped=*/0);  // footer, at exit
#ifndef NUMTRACE_SHIM_WRITER_RECORD_SINK_H_
#define NUMTRACE_SHIM_WRITER_RECORD_SINK_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/format/records.h"

namespace numtrace::shim {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Both may be called from any thread; false means the record was dropped
  // and counted. `seq` of a kernel record is the engine's; kept as given.
  virtual bool Push(KernelRecord record) = 0;
  virtual bool Push(NoteRecord note) = 0;
  // Watch mode's records (docs/format.md, `digest`); sinks that keep no
  // digests drop them.
  virtual bool Push(DigestRecord digest) { return false; }
  virtual bool Push(KernelNameRecord name) { return false; }
  // What a layer learned after the header (docs/format.md, `environment`).
  virtual bool Push(EnvironmentRecord env) { return false; }
  // Makes everything pushed so far reach the file soon (step end).
  virtual void Flush() = 0;
  // Writes what is left and the footer; `dropped` adds the producer's own
  // drops (measurements the device could not take) to the sink's. Idempotent.
  virtual void Finish(uint64_t launches, uint64_t dropped) = 0;
  // What the footer says beyond launches and drops (docs/format.md, footer):
  // kernels that ran unmeasured and the capture layer's counters. Call
  // before Finish; the last call wins. Sinks that write no footer ignore it.
  virtual void SetFooterExtras(uint64_t unmeasured,
                               std::vector<std::pair<std::string, uint64_t>> counters) {}
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_WRITER_RECORD_SINK_H_
