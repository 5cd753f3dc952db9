// File: shim/engine/dtype_rules.h
//
// The tables behind dtype inference from kernel names (dtype_inference.h):
// which kernel families exist and how each one's name is read, which C++
// type spellings are element types, and which tokens of library kernel names
// (cuBLAS, CUTLASS, cuDNN, NCCL, nvjet) name a dtype. Extending inference to
// a new library is meant to be a new table row, not new code.
//
// Example:
//   FindTypeRule("c10::BFloat16")->dtype          // DType::kBF16
//   FindTypeRule("long")->role                    // TypeRole::kWeak
//   DType t; TokenDType("s16816gemm", &t)          // TokenHit::kDType, kF32
//   MatchFamily("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", name).reading  // kNccl
#ifndef NUMTRACE_SHIM_ENGINE_DTYPE_RULES_H_
#define NUMTRACE_SHIM_ENGINE_DTYPE_RULES_H_

#include <cstdint>
#include <string_view>

#include "common/format/dtype.h"

namespace numtrace::shim {

// How a C++ type spelling found among a kernel's template arguments counts.
enum class TypeRole : uint8_t {
  kStrong,  // floating-point element type: the first one decides
  kWeak,    // integer or bool: an element type, but often an index, mask or
            // counter beside float data; used only when no strong type follows
  kOpaque,  // hides the element type (ATen's OpaqueType<N>, fnuz fp8): stop
};

struct TypeRule {
  std::string_view spelling;  // normalized: no const, *, & or spaces at the ends
  DType dtype;
  TypeRole role;
};

// Looks up a normalized spelling; falls back to its last `::` component so
// `at::native::anon_ns::OpaqueType` finds `OpaqueType`. nullptr: not a type
// we know (a functor, a policy, `unsigned int` index types, `char` bytes).
const TypeRule* FindTypeRule(std::string_view spelling);

// What one `_`-separated token of a library kernel name says.
enum class TokenHit : uint8_t { kNone, kDType, kOpaque };

// `token` in any case. Knows plain tokens (bf16, fp16, tf32, e4m3, sgemm,
// scudnn), pairs of them (`bf16bf16`, `e4m3bf16`: input then output type; the
// output is taken) and MMA-shape tokens (`s16816gemm`, `h884gemm`: the letter
// is the input precision, h = half, s = single, d = double, i = int8).
TokenHit TokenDType(std::string_view token, DType* out);

// How a family of kernel names is read.
enum class NameReading : uint8_t {
  kNoDType,     // the name never tells (Triton/Inductor, CuTe DSL): raw, default
  kFixed,       // the family fixes the dtype: `dtype` below
  kNccl,        // ncclDevKernel_<Op>_<RedOp>_<type>_<algo>_<proto> and older spellings
  kNvjet,       // nvjet_[smNN_]<abc>_...: cuBLAS letter code, c = output type
  kFmhaSm100,   // fmhaSm100aKernel_Qkv<T>O<T>...: the O<T> (output) part
  kDescriptor,  // the element type of the last non-const `<needle><T>`
                // descriptor (cuBLAS's cublasGemvTensorStridedBatched<T>: the
                // output tensor), else as kCxx
  kCxx,         // C++ template arguments, then pointer parameters, then name
                // tokens; `skip_arg` names a template argument that is an
                // index type, not an element type
};

// Where a family rule looks: the kernel's own qualified name (prefix or
// substring), or anywhere in the demangled text (template arguments too).
enum class MatchKind : uint8_t { kNamePrefix, kNameContains, kAnywhere };

struct FamilyRule {
  MatchKind match;
  std::string_view needle;
  NameReading reading;
  DType dtype;        // kFixed only
  int skip_arg = -1;  // kCxx only: 0-based template argument to ignore
};

// The first rule of the ordered family table that matches. `qualified_name`:
// the kernel's own name (no return type, template arguments or parameters);
// `full_name`: the whole demangled text. Never fails: a name no rule matches
// is read as C++ (kCxx).
const FamilyRule& MatchFamily(std::string_view qualified_name, std::string_view full_name);

// NCCL: true for collectives that move bytes without arithmetic (AllGather,
// Broadcast, SendRecv): their names carry no dtype, or a byte type (int8_t).
bool NcclOpMovesBytes(std::string_view op_token);
// NCCL dtype tokens ("bf16", "half", "float", "int8_t", "u8"): false if unknown.
bool NcclTypeToken(std::string_view token, DType* out);

// nvjet letter code ("tst"): false when the code is not one we know.
bool NvjetCodeDType(std::string_view code, DType* out);

// fmhaSm100 kernels: the output-type part of the name ("OBfloat16").
bool FmhaSm100DType(std::string_view name, DType* out);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_DTYPE_RULES_H_
