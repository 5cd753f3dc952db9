// File: common/numeric/hd.h
//
// The few primitives the shared reduction headers need so that g++ (host
// reference) and nvcc (device kernels) compile the SAME source and produce
// the SAME bits: the NT_HD qualifier, bit casts, unaligned little-endian
// loads, and double arithmetic that is never fused into an FMA.
//
// Example:
//   NT_HD inline double Square(double x) { return NtMul(x, x); }
//   double d = NtBitsToDouble(0x3ff0000000000000ull);  // 1.0
#ifndef NUMTRACE_COMMON_NUMERIC_HD_H_
#define NUMTRACE_COMMON_NUMERIC_HD_H_

#include <cstdint>
#include <cstring>
#ifndef __CUDA_ARCH__
#include <cmath>
#endif

#ifdef __CUDACC__
#define NT_HD __host__ __device__
#else
#define NT_HD
#endif

namespace numtrace {

NT_HD inline double NtBitsToDouble(uint64_t bits) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

NT_HD inline uint64_t NtDoubleToBits(double d) {
#ifdef __CUDA_ARCH__
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
#endif
}

NT_HD inline float NtBitsToFloat(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// Reads `size` (1, 2, 4 or 8) bytes at `p` as a little-endian integer. Buffers
// need not be aligned (a pointer may sit at any offset of an allocation), so
// the device takes the wide load only when the address allows it.
NT_HD inline uint64_t NtLoadLE(const uint8_t* p, int size) {
#ifdef __CUDA_ARCH__
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if ((a & static_cast<uintptr_t>(size - 1)) == 0) {
    switch (size) {
      case 8: return *reinterpret_cast<const unsigned long long*>(p);
      case 4: return *reinterpret_cast<const uint32_t*>(p);
      case 2: return *reinterpret_cast<const uint16_t*>(p);
      default: return *p;
    }
  }
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
#else
  // x86-64 and aarch64 hosts are little-endian; memcpy compiles to one load.
  switch (size) {
    case 8: { uint64_t v; std::memcpy(&v, p, 8); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    default: return *p;
  }
#endif
}

// Round-to-nearest add/multiply that the compiler may not contract into an
// FMA: explicit intrinsics on the device; on the host the targets that
// include these headers are built with -ffp-contract=off (numtrace_reduce
// exports that flag), and baseline x86-64 has no FMA instruction anyway.
NT_HD inline double NtAdd(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

NT_HD inline double NtMul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// Correctly rounded square root on both sides (IEEE 754 requires it).
NT_HD inline double NtSqrt(double a) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// Round-to-nearest-even integer conversion (only i64/u64 beyond 2^53 round).
NT_HD inline double NtI64ToDouble(int64_t v) {
#ifdef __CUDA_ARCH__
  return __ll2double_rn(static_cast<long long>(v));
#else
  return static_cast<double>(v);
#endif
}

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_NUMERIC_HD_H_
