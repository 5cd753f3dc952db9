// File: common/names/normalize.h
//
// Kernel-name keys for reports and for alignment across runs. One kernel is
// printed many ways: mangled or demangled, by kineto or by Nsight, by another
// PyTorch version (helper types, vector widths), under another Inductor graph
// counter, or as a different GEMM kernel on another GPU. These functions map
// a name (mangled names are demangled first) to keys of growing coarseness:
//
//   ShortName       readable form for reports (not a key)
//   NormalizedName  equal for the "same" kernel across runs, profilers, GPUs
//   KernelFamily    equal for kernels that do the same job with a different
//                   implementation ("gemm", "attention", "nccl:AllReduce")
//
// Standard C++ only: the shim links common/.
//
// Example:
//   NormalizedName("triton_poi_fused_add_mul_3")        // "triton_poi_fused_add_mul"
//   NormalizedName("void <unnamed>::k<(int)4, (bool)1>(T1 *)")
//       == NormalizedName("void (anonymous namespace)::k<4, true>(float*)")  // true
//   KernelFamily("volta_sgemm_128x32_nn")                // "gemm"
//   NormalizedName("FSDPLlama3Model.layers.0.x/op_3_mm") // "layers.0.x/mm"
#ifndef NUMTRACE_COMMON_NAMES_NORMALIZE_H_
#define NUMTRACE_COMMON_NAMES_NORMALIZE_H_

#include <string>
#include <string_view>

namespace numtrace {

// Readable short form of a kernel name for reports. Rule: demangle `_Z`
// names; drop the return type and every parameter list; drop anonymous
// namespaces; keep the qualified function name; elide its template
// arguments as `<...>` unless they are one plain identifier (cutlass's
// `cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>` keeps
// it, since it is the only thing that tells GEMM kernels apart).
//   "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>,
//    std::array<char*, 3ul> >(int, ...)"  ->  "at::native::vectorized_elementwise_kernel<...>"
std::string ShortName(std::string_view name);

// Key equal for one kernel however it is printed. Applies, in order:
//  - DebugMode op keys (`[Root.]module.path/op_N_name`): drop the per-module
//    op counter and a leading CamelCase root-class component.
//  - demangling of `_Z` names;
//  - `(anonymous namespace)` == `<unnamed>`; lambdas `{lambda(int)#1}` ==
//    `[lambda(int) (instance 1)]` (both `{lambda[int]#1}`, the types kept);
//  - casts on template values dropped (`(int)4` -> 4, `(bool)1` -> true),
//    integer suffixes dropped (`3ul` -> 3);
//  - every parameter list, return type and cv-qualifier after it dropped
//    (Nsight prints `(T2 *, const T1 *)`, kineto the real types);
//  - `at::detail::Array` == `std::array`; integer template arguments dropped
//    (vector widths, unroll factors, tile sizes differ per GPU/version);
//  - spaces removed except between words (`> >` == `>>`);
//  - Triton/Inductor: trailing graph counter dropped
//    (`triton_poi_fused_add_mul_3` -> `triton_poi_fused_add_mul`), early-style
//    signature suffixes canonicalised to their arity
//    (`triton__0d1d23d` -> `triton__4args`, as `triton__0d1d2d3d`).
std::string NormalizedName(std::string_view name);

// Coarse key for kernels that do one job but whose implementation is picked
// per GPU/library version: "gemm" (cuBLAS, cuBLASLt, CUTLASS, nvjet, xmma,
// gemv, split-K reduce and epilogue helpers), "attention" (flash, fmha,
// cuDNN sdpa), "conv" (cuDNN convolutions), "nccl:<Collective>" (NCCL by
// collective, "nccl" when none is named). Any other kernel: its
// NormalizedName, so the result is always usable as a key.
std::string KernelFamily(std::string_view name);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_NAMES_NORMALIZE_H_
