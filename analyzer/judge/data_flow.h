// File: analyzer/judge/data_flow.h
//
// Who produced what a kernel read, within one run: a buffer read by kernel j
// was last written by kernel i < j (by the buffer's address, in launch order,
// across streams as launched). A kernel reads its role-`in` buffers and the
// buffers it overwrote whose contents before the launch were measured
// (`pre`); it writes its role `out` and `unknown` buffers. DebugMode logs
// carry no addresses: there an input is matched to the last output with the
// same hash (their "hash" is the tensor's L1 norm).
//
// Example:
//   DataFlow flow(trace);
//   for (uint32_t i : flow.Producers(j)) ...;  // kernels whose output j read
#ifndef NUMTRACE_ANALYZER_JUDGE_DATA_FLOW_H_
#define NUMTRACE_ANALYZER_JUDGE_DATA_FLOW_H_

#include <cstdint>
#include <span>
#include <vector>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

// Whether the kernel read this buffer's contents (an input for origins).
inline bool IsRead(const Buffer& b) { return b.role == Role::kIn || (b.role == Role::kOut && b.has_pre); }
inline bool IsWritten(const Buffer& b) { return b.role != Role::kIn; }

class DataFlow {
 public:
  explicit DataFlow(const Trace& trace);

  // Distinct kernel indices (< j) that last wrote what kernel j read.
  std::span<const uint32_t> Producers(uint32_t j) const {
    return {producers_.data() + first_[j], first_[j + 1] - first_[j]};
  }

 private:
  std::vector<uint32_t> first_;      // kernels + 1 offsets into producers_
  std::vector<uint32_t> producers_;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_DATA_FLOW_H_
