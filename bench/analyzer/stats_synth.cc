#include "bench/analyzer/stats_synth.h"

#include <algorithm>
#include <cmath>

#include "bench/analyzer/synth_random.h"

namespace numtrace::bench {
namespace {

// Rounds to a float format with `mant_bits` explicit mantissa bits, so a
// bf16 buffer's min/max are values a bf16 element can hold.
double RoundMantissa(double v, int mant_bits) {
  if (v == 0) return 0;
  int e = 0;
  const double m = std::frexp(v, &e);
  const double scale = std::ldexp(1.0, mant_bits + 1);
  return std::ldexp(std::nearbyint(m * scale) / scale, e);
}

int MantissaBits(DType t) {
  switch (t) {
    case DType::kF64: return 52;
    case DType::kF32: return 23;
    case DType::kF16: return 10;
    case DType::kBF16: return 7;
    case DType::kF8E4M3: return 3;
    case DType::kF8E5M2: return 2;
    default: return 52;
  }
}

// zeros_like / ones_like / fill_(0): every finite element the same.
void ConstantStats(Rng& rng, BufferStats& s) {
  const double f = static_cast<double>(s.finite());
  const double c = rng.Below(3) == 0 ? 1.0 : 0.0;
  s.has_range = true;
  s.min = s.max = c;
  s.sum = s.l1 = f * c;
  s.l2 = std::sqrt(f) * c;
  s.zero = c == 0 ? s.finite() : 0;
}

void FloatStats(Rng& rng, DType dtype, bool nonneg, BufferStats& s) {
  const int bits = MantissaBits(dtype);
  const double f = static_cast<double>(s.finite());
  const double sigma = std::pow(10.0, rng.Uniform(-2.5, 0.5));
  if (nonneg) {
    const double mu = sigma * rng.Uniform(0.5, 1.5);
    s.has_range = true;
    s.min = RoundMantissa(mu * rng.Uniform(0, 0.05), bits);
    s.max = RoundMantissa(mu + (3.5 + rng.Uniform(0, 1.5)) * sigma, bits);
    s.sum = s.l1 = f * mu;
    s.l2 = std::sqrt(f * (sigma * sigma + mu * mu));
    return;
  }
  const double mu = sigma * rng.Uniform(-0.3, 0.3);
  const double tail = 3.5 + rng.Uniform(0, 1.5);  // extremes of ~n samples
  s.has_range = true;
  s.min = RoundMantissa(mu - tail * sigma, bits);
  s.max = RoundMantissa(mu + tail * sigma, bits);
  s.sum = f * mu;
  s.l1 = f * std::max(std::abs(mu), 0.7978845608 * sigma);  // E|x| of a normal, bounded below by |mu|
  s.l2 = std::sqrt(f * (sigma * sigma + mu * mu));
  s.zero = rng.Below(4) == 0 ? s.finite() / (100 + rng.Below(900)) : 0;
  s.sub = dtype == DType::kBF16 || dtype == DType::kF16 ? rng.Below(3) : 0;
}

void IntStats(Rng& rng, DType dtype, BufferStats& s) {
  const double f = static_cast<double>(s.n);
  s.has_range = true;
  if (dtype == DType::kBool) {
    const uint64_t ones = static_cast<uint64_t>(f * rng.Uniform(0.05, 0.95));
    s.min = 0;
    s.max = 1;
    s.sum = s.l1 = static_cast<double>(ones);
    s.l2 = std::sqrt(static_cast<double>(ones));
    s.zero = s.n - ones;
    return;
  }
  // Index-like: uniform over [0, range).
  const double range = std::ldexp(1.0, 4 + static_cast<int>(rng.Below(20)));
  s.min = 0;
  s.max = range - 1;
  s.sum = s.l1 = std::floor(f * (range - 1) / 2);
  s.l2 = std::sqrt(f * (range - 1) * (range - 1) / 3);
  s.zero = static_cast<uint64_t>(f / range);
}

}  // namespace

BufferStats SynthStats(uint64_t key, DType dtype, uint64_t n, ValueShape shape,
                       const Perturbation& p) {
  BufferStats s;
  s.n = n;
  s.hash = p.hash_salt == 0 ? SplitMix64(key) : Mix(key, p.hash_salt);
  if (dtype == DType::kRaw) return s;
  Rng rng(key);
  if (IsFloat(dtype) && p.nan_fraction > 0)
    s.nan = std::max<uint64_t>(1, static_cast<uint64_t>(n * p.nan_fraction));
  if (shape.constant) {
    ConstantStats(rng, s);
  } else if (IsFloat(dtype)) {
    FloatStats(rng, dtype, shape.nonneg, s);
  } else {
    IntStats(rng, dtype, s);
  }
  if (p.rel != 0 && !shape.constant && IsFloat(dtype)) {
    // Each statistic moves by its own share of rel, in a direction fixed by
    // the key: reduction-order noise is not a uniform scaling.
    Rng dir(Mix(key, 0x6e6f697365ull));
    s.sum *= 1 + p.rel * dir.Uniform(-1, 1);
    s.l1 *= 1 + p.rel * dir.Uniform(0.1, 1);
    s.l2 *= 1 + p.rel * dir.Uniform(0.1, 1);
    if (p.rel >= 1e-4) {
      const int bits = MantissaBits(dtype);
      s.min = RoundMantissa(s.min * (1 + p.rel * dir.Uniform(0.5, 2)), bits);
      s.max = RoundMantissa(s.max * (1 + p.rel * dir.Uniform(0.5, 2)), bits);
    }
  }
  return s;
}

}  // namespace numtrace::bench
