// File: analyzer/tensors/tensor_compare.h
//
// Element-by-element comparison of one buffer from two runs (docs/format.md
// section 6): exact-equal and out-of-tolerance counts, the largest absolute
// and relative errors with their flat index and both values, the ULP
// distance histogram (float dtypes), cosine similarity, NaN/Inf positions
// and the first mismatch, plus where along the buffer mismatches lie.
//
// Rules (A is the reference):
//   equal       the element's bytes are identical
//   mismatched  not equal and |a - b| > atol + rtol * |a|, or one side is
//               NaN/Inf and the other is not the same value (two NaNs match)
//   max_rel     |a - b| / |a| over finite pairs with a != 0
//   ulp         |ord(a) - ord(b)| where ord maps a float's bits onto the
//               integers in value order (-0 and +0 both to 0); pairs with a
//               NaN are left out
//   cosine      sum(a*b) / sqrt(sum(a^2) * sum(b^2)) over finite pairs, in
//               float64; 1 when both are all zero, 0 when only one is
// raw buffers compare bytes as u8 values.
//
// Example:
//   BufferComparison c = CompareElements(a_bytes, b_bytes, DType::kF32, {1e-5, 0});
//   c.mismatched;        // elements beyond tolerance
//   c.ulp[1];            // elements exactly 1 ULP apart
#ifndef NUMTRACE_ANALYZER_TENSORS_TENSOR_COMPARE_H_
#define NUMTRACE_ANALYZER_TENSORS_TENSOR_COMPARE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/format/dtype.h"

namespace numtrace::analyzer {

struct ElementTolerance {
  double rtol = 1e-5;
  double atol = 0;
};

// ULP histogram buckets, in order; their JSON keys and report columns.
inline constexpr int kUlpBuckets = 6;
inline constexpr std::array<std::string_view, kUlpBuckets> kUlpBucketNames = {
    "0", "1", "2-3", "4-15", "16-255", ">255"};
int UlpBucket(uint64_t ulps);

// An index with the two values found there.
struct ElementAt {
  uint64_t index = 0;
  double a = 0, b = 0;
};

struct NonfiniteSide {
  uint64_t nan = 0, inf = 0;             // inf counts both signs
  std::vector<uint64_t> first_indices;   // up to kFirstIndices, ascending
};
inline constexpr size_t kFirstIndices = 8;
inline constexpr int kStripBins = 100;   // the HTML strip of mismatch positions

struct BufferComparison {
  DType dtype = DType::kRaw;
  uint64_t n = 0;              // elements compared (the shorter side when sizes differ)
  uint64_t n_a = 0, n_b = 0;   // element count of each side
  uint64_t equal = 0, mismatched = 0;
  std::optional<ElementAt> max_abs, max_rel, first_mismatch;
  double max_abs_value = 0, max_rel_value = 0;
  bool has_ulp = false;        // float dtypes only
  std::array<uint64_t, kUlpBuckets> ulp{};
  uint64_t max_ulp = 0;
  double cosine = 1;
  NonfiniteSide nonfinite_a, nonfinite_b;
  std::array<uint64_t, kStripBins> strip{};  // mismatches per 1/kStripBins of the buffer

  bool sizes_differ() const { return n_a != n_b; }
  bool identical() const { return !sizes_differ() && equal == n; }
};

BufferComparison CompareElements(std::span<const uint8_t> a, std::span<const uint8_t> b, DType dtype,
                                 const ElementTolerance& tol);

// ULP distance of two float bit patterns of `dtype` (not NaN), exposed for tests.
uint64_t UlpDistance(uint64_t bits_a, uint64_t bits_b, DType dtype);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_TENSORS_TENSOR_COMPARE_H_
