// File: analyzer/judge/data_flow.h
//
// What each kernel of one run read, and who produced it: a buffer read by
// kernel j was last written by kernel i < j (by the buffer's address, in
// launch order, across streams as launched).
//
// A kernel reads its role-`in` buffers and the buffers it overwrote, whose
// contents before the launch are an input too (docs/format.md, `pre`). The
// hash of what it read is `stats.hash` for `in` buffers and the `pre` hash
// for overwritten ones; when a trace kept no `pre` for an overwritten buffer
// the hash is what the previous writer of that address left there (same
// size), and a buffer nobody wrote before is not counted as read (fresh
// memory: its old contents are not an input). It writes its role `out` and
// `unknown` buffers.
//
// A trace without addresses (Trace::flow == FlowKey::kHashChain, a DebugMode
// log) links by its hash chain: a kernel reads only its inputs, and an
// input comes from the kernel its addr names (a logged producer), else from
// the last output with the same hash.
//
// Example:
//   DataFlow flow(trace);
//   for (uint32_t i : flow.Producers(j)) ...;  // kernels whose output j read
//   flow.Reads(k.first_buffer);                // did k read its first buffer?
//   flow.Producer(k.first_buffer);             // who wrote what it read there
//   RunFlow sa(trace, flow, alignment, true);  // with each kernel's pair (run A)
#ifndef NUMTRACE_ANALYZER_JUDGE_DATA_FLOW_H_
#define NUMTRACE_ANALYZER_JUDGE_DATA_FLOW_H_

#include <cstdint>
#include <span>
#include <vector>

#include "analyzer/align/alignment.h"
#include "analyzer/model/trace.h"

namespace numtrace::analyzer {

class DataFlow {
 public:
  explicit DataFlow(const Trace& trace);

  // Distinct kernel indices (< j) that last wrote what kernel j read.
  std::span<const uint32_t> Producers(uint32_t j) const {
    return {producers_.data() + first_[j], first_[j + 1] - first_[j]};
  }
  // By index into Trace::buffers: whether the kernel read the buffer's
  // contents, and the hash of what it read.
  bool Reads(uint32_t buffer) const { return reads_[buffer] != 0; }
  uint64_t InputHash(uint32_t buffer) const { return input_hash_[buffer]; }
  // The kernel that last wrote what a read buffer held (kNoProducer: none
  // in the trace, or the buffer was not read).
  static constexpr uint32_t kNoProducer = UINT32_MAX;
  uint32_t Producer(uint32_t buffer) const { return producer_[buffer]; }

 private:
  std::vector<uint32_t> first_;      // kernels + 1 offsets into producers_
  std::vector<uint32_t> producers_;
  std::vector<uint8_t> reads_;         // per buffer
  std::vector<uint64_t> input_hash_;   // per buffer, valid where reads_
  std::vector<uint32_t> producer_;     // per buffer
};

// One run of an aligned pair of traces as the judge's analyses walk it.
struct RunFlow {
  RunFlow(const Trace& t, const DataFlow& f, const Alignment& alignment, bool run_a);
  const Trace& trace;
  const DataFlow& flow;
  std::vector<int64_t> pair_of;  // kernel -> index into alignment.pairs, -1 unpaired
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_JUDGE_DATA_FLOW_H_
