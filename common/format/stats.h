// File: common/format/stats.h
//
// The statistics of one buffer (trace format v1, section 1.3). This struct is
// what the reduction produces (host reference and CUDA kernels alike) and what
// the trace writer serialises, so it is plain data that nvcc can compile too.
#ifndef NUMTRACE_COMMON_FORMAT_STATS_H_
#define NUMTRACE_COMMON_FORMAT_STATS_H_

#include <cstdint>

namespace numtrace {

struct BufferStats {
  uint64_t n = 0;     // elements under the dtype (bytes for raw)
  uint64_t nan = 0;   // NaN elements
  uint64_t inf = 0;   // +Inf elements
  uint64_t ninf = 0;  // -Inf elements
  uint64_t zero = 0;  // zeros of either sign
  uint64_t sub = 0;   // subnormals
  // min/max over finite elements; meaningful only when has_range (the format
  // omits them when no element is finite).
  bool has_range = false;
  double min = 0, max = 0;
  double sum = 0, l1 = 0, l2 = 0;  // over finite elements, in float64
  uint64_t hash = 0;               // 64-bit hash of the raw bytes, dtype-independent

  // Finite elements: the ones min/max/sum/l1/l2 were taken over.
  uint64_t finite() const { return n - nan - inf - ninf; }
};

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_STATS_H_
