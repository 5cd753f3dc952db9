#include "analyzer/judge/data_flow.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace numtrace::analyzer {

DataFlow::DataFlow(const Trace& trace) {
  const bool by_hash = trace.source == TraceSource::kDebugMode;
  absl::flat_hash_map<uint64_t, uint32_t> last_writer;
  first_.reserve(trace.kernels.size() + 1);
  first_.push_back(0);
  for (uint32_t j = 0; j < trace.kernels.size(); ++j) {
    auto buffers = trace.BuffersOf(trace.kernels[j]);
    const size_t start = producers_.size();
    for (const Buffer& b : buffers) {
      if (!IsRead(b)) continue;
      const uint64_t key = by_hash ? (b.role == Role::kIn ? b.stats.hash : b.pre_hash) : b.addr;
      auto it = last_writer.find(key);
      if (it == last_writer.end()) continue;
      if (std::find(producers_.begin() + start, producers_.end(), it->second) == producers_.end()) {
        producers_.push_back(it->second);
      }
    }
    for (const Buffer& b : buffers) {
      if (IsWritten(b)) last_writer[by_hash ? b.stats.hash : b.addr] = j;
    }
    first_.push_back(static_cast<uint32_t>(producers_.size()));
  }
}

}  // namespace numtrace::analyzer
