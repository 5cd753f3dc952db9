#include "analyzer/judge/value_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "analyzer/judge/tolerance_model.h"

namespace numtrace::analyzer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool Same(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }


}  // namespace

BufferVerdict CompareValues(const Trace& a, uint32_t ia, const Trace& b, uint32_t ib, const Tolerance& tolerance) {
  const Buffer& x = a.buffers[ia];
  const Buffer& y = b.buffers[ib];
  const uint8_t both = x.fingerprint & y.fingerprint;
  if (both & kBytesHash) return CompareBuffers(x, y, tolerance);
  if (both & kHashTensor) {
    if (x.bytes != y.bytes || x.dtype != y.dtype) return {PairStatus::kLayoutMismatch, 0, kInf};
    if (x.stats.hash == y.stats.hash) return {PairStatus::kBitwiseEqual, 0, 0};
    if (!(both & kPrintedStats)) return {PairStatus::kDiverged, 1.0, kInf};
    BufferVerdict v = ComparePrinted(a, ia, b, ib, tolerance);
    // The bits differ whatever the printed digits say.
    if (v.status == PairStatus::kBitwiseEqual) v.status = PairStatus::kWithinTolerance;
    return v;
  }
  if (both & kPrintedStats) return ComparePrinted(a, ia, b, ib, tolerance);
  return {PairStatus::kLayoutMismatch, 0, kInf};
}

double PrintedRounding(uint8_t digits) {
  // Literals, so that 7 digits is exactly the 1e-6 it always was.
  static constexpr double kRounding[] = {1,     1,     1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,
                                         1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16};
  return kRounding[std::min<size_t>(digits, std::size(kRounding) - 1)];
}

bool HasByteHashes(const Trace& t, const Kernel& k) {
  for (const Buffer& b : t.BuffersOf(k)) {
    if (!b.Has(kBytesHash)) return false;
  }
  return true;
}

bool ValuesComparable(const Trace& a, const Trace& b) {
  auto kinds = [](const Trace& t) {
    uint8_t f = 0;
    for (const Buffer& buf : t.buffers) f |= buf.fingerprint;
    return f;
  };
  const uint8_t fa = kinds(a), fb = kinds(b);
  return fa == 0 || fb == 0 || (fa & fb) != 0;
}

BufferVerdict ComparePrinted(const Trace& a, uint32_t ia, const Trace& b, uint32_t ib, const Tolerance& tolerance) {
  const Buffer& ba = a.buffers[ia];
  const Buffer& bb = b.buffers[ib];
  if (ba.bytes != bb.bytes || ba.dtype != bb.dtype) return {PairStatus::kLayoutMismatch, 0, kInf};
  const PrintedStats& x = a.printed[ia];
  const PrintedStats& y = b.printed[ib];
  struct Value {
    uint8_t bit;
    Statistic stat;
    double u, v;
  };
  const Value values[] = {{PrintedStats::kL1, Statistic::kL1, x.l1, y.l1},
                          {PrintedStats::kL2, Statistic::kL2, x.l2, y.l2},
                          {PrintedStats::kMean, Statistic::kSum, x.mean, y.mean},
                          {PrintedStats::kMin, Statistic::kMin, x.min, y.min},
                          {PrintedStats::kMax, Statistic::kMax, x.max, y.max}};
  const uint8_t both = x.has & y.has;
  bool equal = x.has == y.has;
  for (const Value& s : values) {
    if (both & s.bit) equal &= Same(s.u, s.v);
  }
  if (equal) return {PairStatus::kBitwiseEqual, 0, 0};
  if (x.has != y.has) return {PairStatus::kLayoutMismatch, 0, kInf};  // one a hash-only block
  for (const Value& s : values) {
    if ((both & s.bit) && !Same(s.u, s.v) && (!std::isfinite(s.u) || !std::isfinite(s.v))) {
      return {PairStatus::kNonfiniteMismatch, 1.0, kInf};
    }
  }
  const uint64_t n = ba.stats.n;
  const bool known = n > 0 && ba.dtype != DType::kRaw;
  double range = 0;
  for (double m : {x.min, x.max, y.min, y.max}) {
    if (std::isfinite(m)) range = std::max(range, std::fabs(m));
  }
  const double rounding = std::max(PrintedRounding(x.digits), PrintedRounding(y.digits));
  double rel = 0, score = 0;
  for (const Value& s : values) {
    if (!(both & s.bit) || s.u == s.v) continue;
    const double diff = std::fabs(s.u - s.v);
    double scale;
    switch (s.bit) {
      case PrintedStats::kL1: scale = std::max(x.l1, y.l1); break;
      case PrintedStats::kL2: scale = std::max(x.l2, y.l2); break;
      case PrintedStats::kMean:
        scale = (both & PrintedStats::kL1) && n > 0 && std::isfinite(x.l1) && std::isfinite(y.l1)
                    ? std::max(x.l1, y.l1) / static_cast<double>(n)
                    : std::max(std::fabs(s.u), std::fabs(s.v));
        break;
      default: scale = range; break;
    }
    const double relative = known ? RelativeThreshold(s.stat, ba.dtype, n, tolerance.rtol) : tolerance.rtol;
    const double atol = tolerance.atol * (s.bit == PrintedStats::kL1 ? static_cast<double>(n)
                                          : s.bit == PrintedStats::kL2 ? std::sqrt(static_cast<double>(n))
                                                                      : 1.0);
    const double threshold =
        atol + relative * scale + rounding * std::max(std::fabs(s.u), std::fabs(s.v));
    rel = std::max(rel, scale > 0 ? diff / scale : 1.0);
    score = std::max(score, threshold > 0 ? diff / threshold : kInf);
  }
  if (score > 1) return {PairStatus::kDiverged, rel, score};
  return {PairStatus::kWithinTolerance, rel, score};
}

PairVerdict JudgeLoggedPair(const Trace& a, uint32_t ka, const Trace& b, uint32_t kb, const Tolerance& tolerance) {
  const Kernel& x = a.kernels[ka];
  const Kernel& y = b.kernels[kb];
  std::vector<uint32_t> oa, ob, in_a, in_b;
  for (uint32_t i = x.first_buffer; i < x.first_buffer + x.buffer_count; ++i) {
    (a.buffers[i].role == Role::kIn ? in_a : oa).push_back(i);
  }
  for (uint32_t i = y.first_buffer; i < y.first_buffer + y.buffer_count; ++i) {
    (b.buffers[i].role == Role::kIn ? in_b : ob).push_back(i);
  }
  PairVerdict v;
  // In-place ops that returned nothing: their input hashes are all the log has.
  const bool by_inputs = oa.empty() && ob.empty();
  const std::vector<uint32_t>& ca = by_inputs ? in_a : oa;
  const std::vector<uint32_t>& cb = by_inputs ? in_b : ob;
  if (ca.empty() && cb.empty()) return v;
  if (ca.size() != cb.size()) {
    v.status = PairStatus::kLayoutMismatch;
    v.score = kInf;
    v.a_buffer = ca.empty() ? -1 : static_cast<int32_t>(ca[0] - x.first_buffer);
    v.b_buffer = cb.empty() ? -1 : static_cast<int32_t>(cb[0] - y.first_buffer);
    return v;
  }
  for (size_t i = 0; i < ca.size(); ++i) {
    FoldBufferVerdict(&v, CompareValues(a, ca[i], b, cb[i], tolerance), static_cast<int32_t>(ca[i] - x.first_buffer),
         static_cast<int32_t>(cb[i] - y.first_buffer));
  }
  // Equal printed outputs from inputs that differ (a mask one diagonal off
  // under masked_fill, whose logged values are inf and an unchanged Max) are
  // not bitwise equal: the log contradicts it.
  if (v.status == PairStatus::kBitwiseEqual && !by_inputs) {
    bool inputs_differ = in_a.size() != in_b.size();
    for (size_t i = 0; !inputs_differ && i < in_a.size(); ++i) {
      inputs_differ = a.buffers[in_a[i]].stats.hash != b.buffers[in_b[i]].stats.hash;
    }
    if (inputs_differ) v.status = PairStatus::kWithinTolerance;
  }
  return v;
}

}  // namespace numtrace::analyzer
