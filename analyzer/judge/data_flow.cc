#include "analyzer/judge/data_flow.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace numtrace::analyzer {
namespace {

// Producer links (FlowKey::kHashChain) live in their own key space, apart from hashes.
uint64_t ProducerKey(uint64_t addr) { return addr ^ 0xd1b54a32d192ed03ULL; }

}  // namespace

DataFlow::DataFlow(const Trace& trace) {
  const bool by_hash = trace.flow == FlowKey::kHashChain;
  struct Writer {
    uint32_t kernel;
    uint32_t buffer;  // index into trace.buffers
  };
  absl::flat_hash_map<uint64_t, Writer> last_writer;
  reads_.assign(trace.buffers.size(), 0);
  input_hash_.assign(trace.buffers.size(), 0);
  producer_.assign(trace.buffers.size(), kNoProducer);
  first_.reserve(trace.kernels.size() + 1);
  first_.push_back(0);
  for (uint32_t j = 0; j < trace.kernels.size(); ++j) {
    const Kernel& k = trace.kernels[j];
    const size_t start = producers_.size();
    for (uint32_t bi = k.first_buffer; bi < k.first_buffer + k.buffer_count; ++bi) {
      const Buffer& b = trace.buffers[bi];
      // A hash chain: an input with a known producer (addr = 1 + its kernel)
      // is found by it, others by their hash (the last output of that value).
      const uint64_t key = !by_hash ? b.addr : b.addr != 0 ? ProducerKey(b.addr) : b.stats.hash;
      auto it = last_writer.find(key);
      if (b.role == Role::kIn) {
        reads_[bi] = 1;
        input_hash_[bi] = b.stats.hash;
      } else if (b.role == Role::kOut && !by_hash) {
        if (b.has_pre) {
          reads_[bi] = 1;
          input_hash_[bi] = b.pre_hash;
        } else if (it != last_writer.end() && trace.buffers[it->second.buffer].bytes == b.bytes) {
          // No `pre` kept: the contents are what the previous writer left.
          reads_[bi] = 1;
          input_hash_[bi] = trace.buffers[it->second.buffer].stats.hash;
        }
      }
      if (!reads_[bi] || it == last_writer.end()) continue;
      const uint32_t producer = it->second.kernel;
      producer_[bi] = producer;
      if (std::find(producers_.begin() + start, producers_.end(), producer) == producers_.end()) {
        producers_.push_back(producer);
      }
    }
    for (uint32_t bi = k.first_buffer; bi < k.first_buffer + k.buffer_count; ++bi) {
      const Buffer& b = trace.buffers[bi];
      if (!b.IsOutput()) continue;
      if (by_hash) {
        last_writer[b.stats.hash] = {j, bi};
        if (b.addr != 0) last_writer[ProducerKey(b.addr)] = {j, bi};
      } else {
        last_writer[b.addr] = {j, bi};
      }
    }
    first_.push_back(static_cast<uint32_t>(producers_.size()));
  }
}

RunFlow::RunFlow(const Trace& t, const DataFlow& f, const Alignment& alignment, bool run_a)
    : trace(t), flow(f), pair_of(t.kernels.size(), -1) {
  for (uint32_t i = 0; i < alignment.pairs.size(); ++i) {
    pair_of[run_a ? alignment.pairs[i].a : alignment.pairs[i].b] = i;
  }
}

}  // namespace numtrace::analyzer
