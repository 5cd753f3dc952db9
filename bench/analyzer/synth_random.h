// File: bench/analyzer/synth_random.h
//
// Deterministic randomness for the synthetic traces: everything the
// generator writes is a pure function of (seed, what, where), so the same
// seed gives byte-identical files and runs A and B agree exactly where they
// are meant to. No std:: distributions: their output differs across library
// versions, and the files must not.
//
// Example:
//   uint64_t h = Mix(seed, HashName("gemm"), 42);
//   Rng rng(h);
//   double u = rng.Uniform();     // [0, 1)
//   uint64_t k = rng.Below(10);   // 0..9
#ifndef NUMTRACE_BENCH_ANALYZER_SYNTH_RANDOM_H_
#define NUMTRACE_BENCH_ANALYZER_SYNTH_RANDOM_H_

#include <cstdint>
#include <string_view>

namespace numtrace::bench {

constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr uint64_t Mix(uint64_t a, uint64_t b) { return SplitMix64(a ^ SplitMix64(b)); }
constexpr uint64_t Mix(uint64_t a, uint64_t b, uint64_t c) { return Mix(Mix(a, b), c); }

// FNV-1a: stable across platforms, unlike std::hash.
constexpr uint64_t HashName(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

class Rng {
 public:
  explicit Rng(uint64_t state) : state_(state) {}
  uint64_t Next() { return state_ = SplitMix64(state_); }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  uint64_t Below(uint64_t n) { return n ? Next() % n : 0; }

 private:
  uint64_t state_;
};

}  // namespace numtrace::bench

#endif  // NUMTRACE_BENCH_ANALYZER_SYNTH_RANDOM_H_
