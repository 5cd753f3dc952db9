// File: analyzer/read/kernel_record_parser.h
//
// Parses one `kernel` record (trace format v1, 1.2-1.3) from a simdjson On
// Demand object straight into the compact model: the names are interned in
// trace.strings and the buffers appended to the flat trace.buffers. This is
// the hot path of the reader (a 200k-kernel trace holds ~600k buffers), so
// keys are compared raw and nothing is allocated per field.
//
// Example:
//   KernelRecordParser kernels(&trace);
//   absl::Status s = kernels.Parse(object, line_end);  // "buffers[1].dtype: ..." on error
#ifndef NUMTRACE_ANALYZER_READ_KERNEL_RECORD_PARSER_H_
#define NUMTRACE_ANALYZER_READ_KERNEL_RECORD_PARSER_H_

#include "absl/status/status.h"
#include "analyzer/model/trace.h"
#include "simdjson.h"

namespace numtrace::analyzer {

class KernelRecordParser {
 public:
  explicit KernelRecordParser(Trace* trace) : trace_(trace) {}

  // Appends one Kernel (and its buffers) to the trace. Checks that `seq` is
  // the next one (dense from 0). On error the trace may hold a partial
  // kernel; the caller drops it or fails. `line_end` bounds raw strings.
  absl::Status Parse(simdjson::ondemand::object& object, const char* line_end);

  uint64_t next_seq() const { return next_seq_; }

 private:
  absl::Status ParseBuffers(simdjson::ondemand::value& v, const char* end);
  absl::Status ParseBuffer(simdjson::ondemand::object& object, const char* end, Buffer* b);
  absl::Status ParseStats(simdjson::ondemand::value& v, const char* end, BufferStats* s);

  Trace* trace_;
  uint64_t next_seq_ = 0;
  bool unknown_phase_said_ = false;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_KERNEL_RECORD_PARSER_H_
