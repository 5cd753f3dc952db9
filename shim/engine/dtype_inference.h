// File: shim/engine/dtype_inference.h
//
// Decides the element type of a kernel's tensor buffers from its name, once
// per kernel (the engine caches the answer per CUfunction). Names carry the
// dtype in ATen template arguments (`CUDAFunctor_add<c10::BFloat16>`),
// CUTLASS/CuTe types (`cutlass::bfloat16_t`), library tokens (`bf16`,
// `s16816gemm`, `tf32`, `e4m3`), NCCL type tokens (`_bf16_`); Triton names and
// byte-moving collectives carry none and come back raw with source default.
// The rules live in dtype_rules.h. Standard C++ only (part of libnumtrace.so).
//
// Conventions where a name holds several types:
//  - ATen/C++: the first floating-point template argument (the storage type:
//    softmax_warp_forward<c10::BFloat16, c10::BFloat16, float> -> bf16);
//    integer and bool arguments count only when no float one exists, because
//    they are mostly indices, masks and counters beside float data.
//  - GEMM/conv/attention library names: the output type where both are given
//    (`e4m3bf16` -> bf16, fmhaSm100 ...OBfloat16 -> bf16); tf32 -> f32.
//  - complex<float> buffers are measured as f32 pairs, complex<double> as f64.
//
// Example:
//   InferKernelDTypes("void at::native::vectorized_elementwise_kernel<4, "
//       "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(...)")
//     // primary kBF16, source kName
//   InferKernelDTypes("triton_poi_fused_add_0")  // primary kRaw, source kDefault
//   InferKernelDTypes("void foo<float, long>(float*, long const*)")
//     // primary kF32, per_arg {{1, kI64}}
#ifndef NUMTRACE_SHIM_ENGINE_DTYPE_INFERENCE_H_
#define NUMTRACE_SHIM_ENGINE_DTYPE_INFERENCE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/format/dtype.h"

namespace numtrace::shim {

struct KernelDTypes {
  DType primary = DType::kRaw;                 // dtype for tensor buffers of this kernel
  DTypeSource source = DTypeSource::kDefault;  // kName when decided from the name
  // Per-argument overrides when the name tells: 0-based kernel parameter
  // index and dtype, only where it differs from `primary`. Read from the
  // parameter list of demangled names: `T*` pointers and ATen's TensorInfo /
  // PackedTensorAccessor structs (whose first member is the data pointer),
  // e.g. the `long` index tensor of indexSelectLargeIndex<c10::BFloat16, long, ...>.
  std::vector<std::pair<uint32_t, DType>> per_arg;
};

// `name`: mangled (`_Z...`, demangled here) or demangled. Never fails:
// unknown names give raw with source kDefault.
KernelDTypes InferKernelDTypes(std::string_view name);

// Parses a per-argument annotation string "bf16,bf16,f32,i64" (from
// numtrace_annotate_kernel): trace-format dtype names separated by commas,
// spaces around each allowed. On bad input returns false, leaves `out`
// empty and sets `error` to one line naming the bad entry and its position.
// Example:
//   ParseDTypeList("bf16, f32", &v, &e)  // true, v == {kBF16, kF32}
//   ParseDTypeList("bf16,fp32", &v, &e)  // false, e: entry 2 "fp32" is not a dtype ...
[[nodiscard]] bool ParseDTypeList(std::string_view spec, std::vector<DType>* out,
                                  std::string* error);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_DTYPE_INFERENCE_H_
