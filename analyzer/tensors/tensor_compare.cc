#include "analyzer/tensors/tensor_compare.h"

#include <cmath>
#include <cstring>

#include "common/numeric/element_decode.h"

namespace numtrace::analyzer {
namespace {

using numtrace::DecodeElement;
using numtrace::Element;
using numtrace::ElementClass;

int BitWidth(DType t) { return DTypeSize(t) * 8; }

// Sign-magnitude bits -> an integer in value order.
int64_t Ordered(uint64_t bits, DType t) {
  const int w = BitWidth(t);
  const uint64_t sign = uint64_t{1} << (w - 1);
  const uint64_t mag = bits & (sign - 1);
  return (bits & sign) ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
}

uint64_t LoadBits(const uint8_t* p, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool Finite(const Element& e) {
  return e.cls != ElementClass::kNaN && e.cls != ElementClass::kPosInf && e.cls != ElementClass::kNegInf;
}

double ValueOf(const Element& e) {
  switch (e.cls) {
    case ElementClass::kNaN: return std::nan("");
    case ElementClass::kPosInf: return INFINITY;
    case ElementClass::kNegInf: return -INFINITY;
    default: return e.value;
  }
}

void NoteNonfinite(const Element& e, uint64_t i, NonfiniteSide* s) {
  if (e.cls == ElementClass::kNaN) ++s->nan;
  else if (e.cls == ElementClass::kPosInf || e.cls == ElementClass::kNegInf) ++s->inf;
  else return;
  if (s->first_indices.size() < kFirstIndices) s->first_indices.push_back(i);
}

}  // namespace

int UlpBucket(uint64_t u) {
  if (u == 0) return 0;
  if (u == 1) return 1;
  if (u <= 3) return 2;
  if (u <= 15) return 3;
  if (u <= 255) return 4;
  return 5;
}

uint64_t UlpDistance(uint64_t a, uint64_t b, DType t) {
  const int64_t oa = Ordered(a, t), ob = Ordered(b, t);
  // Differences fit: both lie within +-2^63 - 1 for every width up to 64.
  return oa > ob ? static_cast<uint64_t>(oa) - static_cast<uint64_t>(ob)
                 : static_cast<uint64_t>(ob) - static_cast<uint64_t>(oa);
}

BufferComparison CompareElements(std::span<const uint8_t> a, std::span<const uint8_t> b, DType dtype,
                                 const ElementTolerance& tol) {
  BufferComparison c;
  c.dtype = dtype;
  const DType as = dtype == DType::kRaw ? DType::kU8 : dtype;  // raw: bytes as u8 values
  const int size = DTypeSize(as);
  c.n_a = a.size() / size;
  c.n_b = b.size() / size;
  c.n = std::min(c.n_a, c.n_b);
  c.has_ulp = IsFloat(dtype);
  long double dot = 0, aa = 0, bb = 0;  // wide: squares of large values stay finite
  for (uint64_t i = 0; i < c.n; ++i) {
    const uint8_t* pa = a.data() + i * size;
    const uint8_t* pb = b.data() + i * size;
    const Element ea = DecodeElement(pa, as), eb = DecodeElement(pb, as);
    NoteNonfinite(ea, i, &c.nonfinite_a);
    NoteNonfinite(eb, i, &c.nonfinite_b);
    const bool same_bytes = std::memcmp(pa, pb, size) == 0;
    if (same_bytes) ++c.equal;
    const bool fa = Finite(ea), fb = Finite(eb);
    const double va = ValueOf(ea), vb = ValueOf(eb);
    bool mismatch = false;
    if (fa && fb) {
      const double abs = std::fabs(va - vb);
      mismatch = abs > tol.atol + tol.rtol * std::fabs(va);
      if (abs > c.max_abs_value) {
        c.max_abs_value = abs;
        c.max_abs = ElementAt{i, va, vb};
      }
      if (va != 0) {
        const double rel = abs / std::fabs(va);
        if (rel > c.max_rel_value) {
          c.max_rel_value = rel;
          c.max_rel = ElementAt{i, va, vb};
        }
      }
      dot += static_cast<long double>(va) * vb;
      aa += static_cast<long double>(va) * va;
      bb += static_cast<long double>(vb) * vb;
    } else {
      const bool both_nan = ea.cls == ElementClass::kNaN && eb.cls == ElementClass::kNaN;
      mismatch = !both_nan && !(ea.cls == eb.cls && !fa && !fb);
    }
    if (c.has_ulp && ea.cls != ElementClass::kNaN && eb.cls != ElementClass::kNaN) {
      const uint64_t u = UlpDistance(LoadBits(pa, size), LoadBits(pb, size), as);
      ++c.ulp[UlpBucket(u)];
      if (u > c.max_ulp) c.max_ulp = u;
    }
    if (mismatch) {
      ++c.mismatched;
      if (!c.first_mismatch) c.first_mismatch = ElementAt{i, va, vb};
      ++c.strip[c.n ? i * kStripBins / c.n : 0];
    }
  }
  if (aa == 0 && bb == 0) c.cosine = 1;
  else if (aa == 0 || bb == 0) c.cosine = 0;
  else c.cosine = static_cast<double>(dot / (std::sqrt(aa) * std::sqrt(bb)));
  return c;
}

}  // namespace numtrace::analyzer
