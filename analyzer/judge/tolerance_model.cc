#include "analyzer/judge/tolerance_model.h"

#include <algorithm>
#include <cmath>

namespace numtrace::analyzer {

double UnitRoundoff(DType t) {
  switch (t) {
    case DType::kF64: return std::ldexp(1.0, -53);
    case DType::kF32: return std::ldexp(1.0, -24);
    case DType::kF16: return std::ldexp(1.0, -11);
    case DType::kBF16: return std::ldexp(1.0, -8);
    case DType::kF8E4M3: return std::ldexp(1.0, -4);
    case DType::kF8E5M2: return std::ldexp(1.0, -3);
    default: return 0;
  }
}

double RelativeThreshold(Statistic s, DType dtype, uint64_t n, double rtol) {
  const double u = UnitRoundoff(dtype);
  double model;
  if (IsAggregate(s)) {
    // Few elements average little out: near n = 1 an aggregate is an element.
    const double small = n > 0 ? kSmallBufferUnits / std::sqrt(static_cast<double>(n)) : kSmallBufferUnits;
    model = std::min(kExtremeUnits + kAggregateUnits, kAggregateUnits + small) * u;
  } else {
    model = kExtremeUnits * u;
  }
  return std::max(rtol, model);
}

}  // namespace numtrace::analyzer
