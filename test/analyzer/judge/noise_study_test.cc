// File: test/analyzer/judge/noise_study_test.cc
//
// The noise study that calibrates analyzer/judge/tolerance_model.h, kept as
// a test so a rule change cannot silently break either side:
//  - noise: the same computation done two legitimate ways in real float
//    arithmetic (accumulation orders and split-K of a float32 GEMM, a long
//    row reduction, fused versus unfused bf16/f16 elementwise chains, online
//    versus two-pass softmax, layer norm with float32 versus low-precision
//    accumulation) must be within tolerance;
//  - planted errors on those outputs (uniform scale 0.1/0.5/1/10%, one
//    element changed, a sign flip, a bias on a slice): a uniform 1% change
//    of a buffer of >= 1024 elements must be diverged in f32, f16 and bf16.
// Outputs are stored in each dtype with round-to-nearest-even and measured
// with the shim's own host reduction (shim/reduce/host_reduce.h), exactly as
// a trace would record them. The table printed here is docs/diffing.md's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyzer/judge/buffer_compare.h"
#include "gtest/gtest.h"
#include "shim/reduce/host_reduce.h"

namespace numtrace::analyzer {
namespace {

using Values = std::vector<float>;

// Rounds to the storage dtype (nearest even) and back.
float Round(float v, DType t) {
  if (t == DType::kF32) return v;
  if (t == DType::kF16) return static_cast<float>(static_cast<_Float16>(v));
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

// The bytes a kernel storing `values` as `t` leaves in memory.
std::vector<uint8_t> Store(const Values& values, DType t) {
  std::vector<uint8_t> bytes(values.size() * DTypeSize(t));
  for (size_t i = 0; i < values.size(); ++i) {
    float v = Round(values[i], t);
    if (t == DType::kF32) {
      std::memcpy(&bytes[i * 4], &v, 4);
    } else if (t == DType::kF16) {
      _Float16 h = static_cast<_Float16>(v);
      std::memcpy(&bytes[i * 2], &h, 2);
    } else {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      uint16_t top = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&bytes[i * 2], &top, 2);
    }
  }
  return bytes;
}

// A trace's view of the buffer: stats from the project's own reduction.
Buffer Measure(const Values& values, DType t) {
  std::vector<uint8_t> bytes = Store(values, t);
  Buffer b;
  b.dtype = t;
  b.role = Role::kOut;
  b.bytes = bytes.size();
  b.stats = shim::ReduceHost(bytes.data(), bytes.size(), t);
  return b;
}

Values Random(size_t n, uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Values v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// ---- the computations, each done two legitimate ways ----

enum class GemmOrder { kForward, kReverse, kBlocked8, kSplitK4 };

// C = A * B (m x k times k x n), float32 accumulation in the given order.
Values Gemm(const Values& a, const Values& b, int m, int k, int n, GemmOrder order) {
  Values c(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      auto term = [&](int p) { return a[i * k + p] * b[p * n + j]; };
      switch (order) {
        case GemmOrder::kForward:
          for (int p = 0; p < k; ++p) acc += term(p);
          break;
        case GemmOrder::kReverse:
          for (int p = k - 1; p >= 0; --p) acc += term(p);
          break;
        case GemmOrder::kBlocked8: {  // 8 lanes, as a tensor-core tile would
          float lane[8] = {};
          for (int p = 0; p < k; ++p) lane[p % 8] += term(p);
          for (float x : lane) acc += x;
          break;
        }
        case GemmOrder::kSplitK4: {  // four K slices summed at the end
          float part[4] = {};
          for (int s = 0; s < 4; ++s) {
            for (int p = s * k / 4; p < (s + 1) * k / 4; ++p) part[s] += term(p);
          }
          acc = (part[0] + part[1]) + (part[2] + part[3]);
          break;
        }
      }
      c[static_cast<size_t>(i) * n + j] = acc;
    }
  }
  return c;
}

// Row sums of an r x w matrix: sequential or pairwise (a tree reduction).
float Pairwise(const float* x, int n) {
  if (n <= 8) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += x[i];
    return s;
  }
  return Pairwise(x, n / 2) + Pairwise(x + n / 2, n - n / 2);
}
Values RowSums(const Values& x, int r, int w, bool pairwise) {
  Values out(r);
  for (int i = 0; i < r; ++i) {
    if (pairwise) {
      out[i] = Pairwise(&x[static_cast<size_t>(i) * w], w);
    } else {
      float s = 0;
      for (int q = 0; q < w; ++q) s += x[static_cast<size_t>(i) * w + q];
      out[i] = s;
    }
  }
  return out;
}

// gelu(x * w + b) * s: unfused rounds to `t` after every op (one kernel per
// op), fused computes in float32 and rounds once.
float Gelu(float v) { return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v))); }
Values Chain(const Values& x, const Values& w, const Values& b, float s, DType t, bool fused) {
  Values out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i % w.size();
    if (fused) {
      out[i] = Gelu(x[i] * w[c] + b[c]) * s;
    } else {
      float v = Round(x[i] * w[c], t);
      v = Round(v + b[c], t);
      v = Round(Gelu(v), t);
      out[i] = v * s;
    }
  }
  return out;
}

// Row softmax: two passes (max, then sum) or online (running max, rescaled sum).
Values Softmax(const Values& x, int r, int w, bool online) {
  Values out(x.size());
  for (int i = 0; i < r; ++i) {
    const float* row = &x[static_cast<size_t>(i) * w];
    float m = -INFINITY, sum = 0;
    if (online) {
      for (int q = 0; q < w; ++q) {
        float nm = std::max(m, row[q]);
        sum = sum * std::exp(m - nm) + std::exp(row[q] - nm);
        m = nm;
      }
    } else {
      for (int q = 0; q < w; ++q) m = std::max(m, row[q]);
      for (int q = 0; q < w; ++q) sum += std::exp(row[q] - m);
    }
    for (int q = 0; q < w; ++q) out[static_cast<size_t>(i) * w + q] = std::exp(row[q] - m) / sum;
  }
  return out;
}

// Layer norm of rows stored as `t`. Reference: float32 two-pass statistics.
// Low precision: partial sums of 32 elements and the final mean and rstd
// held in `t` (a kernel keeping its statistics in the storage type); for
// float32 storage the one-pass E[x^2] - E[x]^2 variance instead.
Values LayerNorm(const Values& x_in, int r, int w, DType t, bool low_precision) {
  Values x(x_in.size()), out(x_in.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = Round(x_in[i], t);
  for (int i = 0; i < r; ++i) {
    const float* row = &x[static_cast<size_t>(i) * w];
    float mean = 0, var = 0;
    if (!low_precision) {
      for (int q = 0; q < w; ++q) mean += row[q];
      mean /= w;
      for (int q = 0; q < w; ++q) var += (row[q] - mean) * (row[q] - mean);
      var /= w;
    } else if (t == DType::kF32) {
      float s = 0, s2 = 0;
      for (int q = 0; q < w; ++q) {
        s += row[q];
        s2 += row[q] * row[q];
      }
      mean = s / w;
      var = s2 / w - mean * mean;
    } else {
      float s = 0, s2 = 0;
      for (int q = 0; q < w; q += 32) {
        float p = 0, p2 = 0;
        for (int e = q; e < std::min(q + 32, w); ++e) {
          p += row[e];
          p2 += row[e] * row[e];
        }
        s += Round(p, t);
        s2 += Round(p2, t);
      }
      mean = Round(s / w, t);
      var = Round(s2 / w - mean * mean, t);
    }
    float rstd = 1.0f / std::sqrt(var + 1e-5f);
    if (low_precision) rstd = Round(rstd, t);
    for (int q = 0; q < w; ++q) out[static_cast<size_t>(i) * w + q] = (row[q] - mean) * rstd;
  }
  return out;
}

// ---- the study ----

struct NoiseCase {
  std::string name;
  Values base, other;
  std::vector<DType> dtypes;  // storage dtypes this computation is realistic in
};

const std::vector<DType> kFloats = {DType::kF32, DType::kF16, DType::kBF16};

std::vector<NoiseCase> NoiseCases() {
  std::vector<NoiseCase> cases;
  {
    const int m = 64, k = 1024, n = 64;
    Values a = Random(m * k, 1), b = Random(k * n, 2);
    Values fwd = Gemm(a, b, m, k, n, GemmOrder::kForward);
    cases.push_back({"gemm k=1024 fwd/rev", fwd, Gemm(a, b, m, k, n, GemmOrder::kReverse), kFloats});
    cases.push_back({"gemm k=1024 fwd/8-lane", fwd, Gemm(a, b, m, k, n, GemmOrder::kBlocked8), kFloats});
    cases.push_back({"gemm k=1024 fwd/split-K 4", fwd, Gemm(a, b, m, k, n, GemmOrder::kSplitK4), kFloats});
  }
  {
    Values x = Random(256 * 4096, 3);
    cases.push_back({"row sums w=4096 seq/pairwise", RowSums(x, 256, 4096, false), RowSums(x, 256, 4096, true), kFloats});
  }
  for (DType t : {DType::kF16, DType::kBF16}) {
    Values x = Random(8 * 1024, 4, -3, 3), w = Random(1024, 5, 0.5f, 1.5f), b = Random(1024, 6, -0.5f, 0.5f);
    cases.push_back({std::string("gelu chain fused/unfused"), Chain(x, w, b, 1.7f, t, true),
                     Chain(x, w, b, 1.7f, t, false), {t}});
  }
  {
    Values x = Random(16 * 1024, 7, -8, 8);
    cases.push_back({"softmax w=1024 two-pass/online", Softmax(x, 16, 1024, false), Softmax(x, 16, 1024, true), kFloats});
  }
  for (DType t : kFloats) {
    Values x = Random(8 * 1024, 8, -2, 3);
    cases.push_back({"layernorm w=1024 fp32/low-prec acc", LayerNorm(x, 8, 1024, t, false),
                     LayerNorm(x, 8, 1024, t, true), {t}});
  }
  return cases;
}

struct Planted {
  std::string name;
  std::function<Values(const Values&)> apply;
};

size_t Largest(const Values& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end(), [](float x, float y) {
                               return std::fabs(x) < std::fabs(y);
                             }) - v.begin());
}

std::vector<Planted> PlantedErrors() {
  std::vector<Planted> p;
  for (double s : {0.001, 0.005, 0.01, 0.1}) {
    char name[32];
    std::snprintf(name, sizeof(name), "uniform scale %g%%", s * 100);
    p.push_back({name, [s](const Values& v) {
                   Values o = v;
                   for (float& x : o) x = static_cast<float>(x * (1 + s));
                   return o;
                 }});
  }
  p.push_back({"one element x2", [](const Values& v) {
                 Values o = v;
                 o[o.size() / 3] *= 2;
                 return o;
               }});
  p.push_back({"sign flip of the largest", [](const Values& v) {
                 Values o = v;
                 o[Largest(o)] *= -1;
                 return o;
               }});
  p.push_back({"bias 0.1 rms on 1/8", [](const Values& v) {
                 double sq = 0;
                 for (float x : v) sq += double(x) * x;
                 const float bias = static_cast<float>(0.1 * std::sqrt(sq / v.size()));
                 Values o = v;
                 for (size_t i = 0; i < o.size() / 8; ++i) o[i] += bias;
                 return o;
               }});
  return p;
}

const Tolerance kDefault{};  // rtol 1e-5, atol 0: the CLI's defaults

TEST(NoiseStudy, NoiseIsWithinToleranceAndOnePercentDiverges) {
  std::map<DType, double> worst_noise;
  std::map<DType, std::map<std::string, std::pair<double, double>>> planted;  // min/max score
  std::printf("\n| case | dtype | n | score | status |\n|---|---|---|---|---|\n");
  for (const NoiseCase& c : NoiseCases()) {
    ASSERT_NE(c.base, c.other) << c.name << ": the two ways must really differ";
    for (DType t : c.dtypes) {
      const Buffer base = Measure(c.base, t);
      BufferVerdict v = CompareBuffers(base, Measure(c.other, t), kDefault);
      std::printf("| %s | %s | %zu | %.3g | %s |\n", c.name.c_str(), std::string(DTypeName(t)).c_str(),
                  c.base.size(), v.score, std::string(PairStatusName(v.status)).c_str());
      EXPECT_LE(v.status, PairStatus::kWithinTolerance) << c.name << " " << DTypeName(t) << " score " << v.score;
      worst_noise[t] = std::max(worst_noise[t], v.score);
      for (const Planted& p : PlantedErrors()) {
        BufferVerdict pv = CompareBuffers(base, Measure(p.apply(c.base), t), kDefault);
        auto [it, added] = planted[t].try_emplace(p.name, pv.score, pv.score);
        it->second.first = std::min(it->second.first, pv.score);
        it->second.second = std::max(it->second.second, pv.score);
        const bool required = p.name == "uniform scale 1%" || p.name == "uniform scale 10%";
        if (required && c.base.size() >= 1024) {
          EXPECT_EQ(pv.status, PairStatus::kDiverged) << c.name << " " << DTypeName(t) << " " << p.name
                                                      << " score " << pv.score;
        }
      }
    }
  }
  std::printf("\n| dtype | largest noise score |");
  for (const Planted& p : PlantedErrors()) std::printf(" %s |", p.name.c_str());
  std::printf("\n|---|---|");
  for (size_t i = 0; i < PlantedErrors().size(); ++i) std::printf("---|");
  std::printf("\n");
  for (DType t : kFloats) {
    std::printf("| %s | %.3g |", std::string(DTypeName(t)).c_str(), worst_noise[t]);
    for (const Planted& p : PlantedErrors()) {
      auto [lo, hi] = planted[t][p.name];
      std::printf(" %.3g - %.3g |", lo, hi);
    }
    std::printf("\n");
  }
  std::printf("(planted: smallest - largest score over the noise cases' base outputs; > 1 is detected)\n");
}

}  // namespace
}  // namespace numtrace::analyzer
