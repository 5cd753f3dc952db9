// File: shim/engine/dtype_rules.cc
//
// The tables. Each row says where its spelling comes from, so the next
// library can be added by analogy. Order matters only in the family table.
#include "shim/engine/dtype_rules.h"

#include <array>
#include <cctype>
#include <string>

namespace numtrace::shim {
namespace {

using enum DType;

// C++ element types as demanglers and profilers spell them.
constexpr TypeRule kTypeRules[] = {
    // Plain C++ (ATen instantiates its kernels on these; cub, cuDNN too).
    {"float", kF32, TypeRole::kStrong},
    {"double", kF64, TypeRole::kStrong},
    {"long", kI64, TypeRole::kWeak},          // int64_t on Linux, ATen's index type
    {"long long", kI64, TypeRole::kWeak},
    {"int64_t", kI64, TypeRole::kWeak},
    {"int", kI32, TypeRole::kWeak},           // also cuBLAS's index template argument
    {"int32_t", kI32, TypeRole::kWeak},
    {"short", kI16, TypeRole::kWeak},
    {"int16_t", kI16, TypeRole::kWeak},
    {"signed char", kI8, TypeRole::kWeak},    // ATen's int8 (at::kChar)
    {"int8_t", kI8, TypeRole::kWeak},
    {"unsigned char", kU8, TypeRole::kWeak},  // ATen's uint8 (at::kByte)
    {"uint8_t", kU8, TypeRole::kWeak},
    {"bool", kBool, TypeRole::kWeak},
    // c10 (PyTorch) scalar types.
    {"c10::Half", kF16, TypeRole::kStrong},
    {"c10::BFloat16", kBF16, TypeRole::kStrong},
    {"c10::Float8_e4m3fn", kF8E4M3, TypeRole::kStrong},
    {"c10::Float8_e5m2", kF8E5M2, TypeRole::kStrong},
    // fnuz variants (ROCm-style) encode NaN and bias differently from the
    // OCP formats our stats decode; block-scale and fp4 types have no dtype.
    {"c10::Float8_e4m3fnuz", kRaw, TypeRole::kOpaque},
    {"c10::Float8_e5m2fnuz", kRaw, TypeRole::kOpaque},
    {"c10::Float8_e8m0fnu", kRaw, TypeRole::kOpaque},
    {"c10::Float4_e2m1fn_x2", kRaw, TypeRole::kOpaque},
    {"c10::qint8", kI8, TypeRole::kWeak},
    {"c10::quint8", kU8, TypeRole::kWeak},
    {"c10::qint32", kI32, TypeRole::kWeak},
    // c10::complex<T>, thrust::complex<T>: the wrapper is not in this table,
    // so the scan reaches T: a complex<float> buffer is measured as f32
    // pairs (NaN/Inf counts stay exact; n counts components).
    // CUDA (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h) as cuBLAS/cuDNN/vLLM use them.
    {"__half", kF16, TypeRole::kStrong},
    {"half", kF16, TypeRole::kStrong},
    {"__nv_half", kF16, TypeRole::kStrong},
    {"__half2", kF16, TypeRole::kStrong},
    {"half2", kF16, TypeRole::kStrong},
    {"__nv_bfloat16", kBF16, TypeRole::kStrong},
    {"nv_bfloat16", kBF16, TypeRole::kStrong},
    {"__nv_bfloat162", kBF16, TypeRole::kStrong},
    {"__nv_fp8_e4m3", kF8E4M3, TypeRole::kStrong},
    {"__nv_fp8_e5m2", kF8E5M2, TypeRole::kStrong},
    {"float2", kF32, TypeRole::kStrong},      // cuDNN batch-norm/FFT vector types
    {"float4", kF32, TypeRole::kStrong},
    {"double2", kF64, TypeRole::kStrong},
    // CUTLASS/CuTe numeric types (flash-attention, CUTLASS GEMMs, MoE kernels).
    // Listed without namespace: cuDNN ships renamed copies of CUTLASS
    // (cutlass_cudnn_train::tfloat32_t), found by the last-component lookup.
    {"half_t", kF16, TypeRole::kStrong},
    {"bfloat16_t", kBF16, TypeRole::kStrong},
    {"tfloat32_t", kF32, TypeRole::kStrong},
    {"float_e4m3_t", kF8E4M3, TypeRole::kStrong},
    {"float_e5m2_t", kF8E5M2, TypeRole::kStrong},
    {"float_e2m1_t", kRaw, TypeRole::kOpaque},
    // ATen's size-only stand-ins (cat, scatter/gather, cub sort values):
    // the element type was erased on purpose.
    {"OpaqueType", kRaw, TypeRole::kOpaque},
};

// Tokens of library kernel names, lowercased.
struct Token {
  std::string_view token;
  DType dtype;
};
constexpr Token kTokens[] = {
    // Type tokens: cuBLAS (ampere_bf16_..., sm90_xmma_gemm_bf16bf16_...),
    // CUTLASS (cutlass_80_tensorop_bf16_...), cuDNN (..._wgmma_f16_...),
    // xFormers/PyTorch mem-efficient attention (fmha_cutlassB_bf16_...),
    // TensorRT-LLM/FlashInfer (bmm_Bfloat16_..., MxE4m3).
    {"bf16", kBF16}, {"bfloat16", kBF16},
    {"f16", kF16}, {"fp16", kF16}, {"half", kF16}, {"float16", kF16},
    {"f32", kF32}, {"fp32", kF32}, {"float32", kF32},
    {"tf32", kF32},  // TensorFloat-32 math on f32 storage
    {"f64", kF64}, {"fp64", kF64},
    {"e4m3", kF8E4M3}, {"mxe4m3", kF8E4M3}, {"fp8e4m3", kF8E4M3},
    {"e5m2", kF8E5M2}, {"mxe5m2", kF8E5M2}, {"fp8e5m2", kF8E5M2},
    {"i8", kI8}, {"s8", kI8}, {"int8", kI8},
    {"u8", kU8}, {"uint8", kU8},
    {"i32", kI32}, {"s32", kI32}, {"int32", kI32},
    // BLAS-style precision prefixes: s = single, d = double, h = half,
    // c/z = complex single/double (measured as f32/f64 pairs),
    // gc = cuFFT-based complex GEMM in cuDNN/cuBLAS; scudnn/hcudnn = cuDNN
    // convolution kernels (cudnn_volta_scudnn_128x64_...).
    {"sgemm", kF32}, {"dgemm", kF64}, {"hgemm", kF16}, {"cgemm", kF32},
    {"zgemm", kF64}, {"gcgemm", kF32}, {"sgemv", kF32}, {"dgemv", kF64},
    {"scudnn", kF32}, {"hcudnn", kF16}, {"dcudnn", kF64},
};
// 4-bit and block-scale-only tokens: stop, the bytes are packed.
constexpr std::string_view kOpaqueTokens[] = {"e2m1", "mxe2m1", "fp4", "nvfp4", "e8m0"};

// MMA-shape tokens: <precision letter><digits><what>, e.g. s16816gemm
// (CUTLASS/cuBLAS: s = f32 input/accumulate via tf32 or, after an explicit
// bf16/f16 token, the accumulator - the explicit token comes first and wins),
// h884gemm, s1688fprop, s16816dgrad, i8816gemm.
constexpr std::string_view kMmaSuffixes[] = {"gemm", "fprop", "dgrad", "wgrad"};

constexpr FamilyRule kFamilies[] = {
    // torch.compile (Inductor) names carry op names, never dtypes.
    {MatchKind::kNamePrefix, "triton_", NameReading::kNoDType, kRaw},
    {MatchKind::kNamePrefix, "triton__", NameReading::kNoDType, kRaw},
    // NCCL device kernels (2.19+: ncclDevKernel_, ncclSymkDevKernel_; older: ncclKernel_).
    {MatchKind::kNamePrefix, "nccl", NameReading::kNccl, kRaw},
    // cuBLASLt's nvjet kernels (CUDA 12.6+).
    {MatchKind::kNamePrefix, "nvjet_", NameReading::kNvjet, kRaw},
    // TensorRT-LLM / FlashInfer Blackwell attention.
    {MatchKind::kNamePrefix, "fmhaSm100", NameReading::kFmhaSm100, kRaw},
    // CuTe DSL flash-attention (kernel_cutlass_kernel_flash_attncute...): no type.
    {MatchKind::kNamePrefix, "kernel_cutlass_kernel_", NameReading::kNoDType, kRaw},
    // ATen dtype-converting copies: the lambda takes the float source; the
    // name says what is written, and the written buffer is what we diff.
    {MatchKind::kAnywhere, "bfloat16_copy_kernel_cuda", NameReading::kFixed, kBF16},
    {MatchKind::kAnywhere, "float16_copy_kernel_cuda", NameReading::kFixed, kF16},
    // fbgemm fp8 (hfp8) conversions: the type written, as for the copies.
    {MatchKind::kAnywhere, "_float_to_hfp8_gpu", NameReading::kFixed, kU8},
    {MatchKind::kAnywhere, "_hfp8_to_float_gpu", NameReading::kFixed, kF32},
    // cuBLAS gemv/dot/gemmk1/reduce kernels: the first float template
    // argument is the compute type; the tensors are described by
    // cublasGemvTensorStridedBatched<T const> (inputs) and <T> (output).
    {MatchKind::kAnywhere, "cublasGemvTensorStridedBatched<", NameReading::kDescriptor, kRaw},
    // ATen kernels whose first template argument is an index type:
    // elementwise_kernel_with_index<index_t, func_t> (arange, linspace),
    // vectorized_gather_kernel<Alignment, index_t> (data moved as char*).
    {MatchKind::kNameContains, "elementwise_kernel_with_index", NameReading::kCxx, kRaw, 0},
    {MatchKind::kNameContains, "vectorized_gather_kernel", NameReading::kCxx, kRaw, 1},
};
constexpr FamilyRule kCxxFamily = {MatchKind::kAnywhere, "", NameReading::kCxx, kRaw};

// NCCL collectives that copy bytes.
constexpr std::string_view kNcclByteOps[] = {"AllGather", "Broadcast", "SendRecv", "Send",
                                             "Recv",      "AllToAll",  "Gather",   "Scatter"};
// NCCL type tokens: ncclDevKernel_* use short names (bf16, f16, f32, u8),
// ncclKernel_* (NCCL < 2.19) the C type (half, float, int8_t).
constexpr Token kNcclTypes[] = {
    {"bf16", kBF16}, {"f16", kF16}, {"half", kF16}, {"f32", kF32}, {"float", kF32},
    {"f64", kF64}, {"double", kF64}, {"i8", kI8}, {"int8_t", kI8}, {"u8", kU8},
    {"uint8_t", kU8}, {"i32", kI32}, {"int32_t", kI32}, {"i64", kI64}, {"int64_t", kI64},
    {"f8e4m3", kF8E4M3}, {"fp8_e4m3", kF8E4M3}, {"f8e5m2", kF8E5M2}, {"fp8_e5m2", kF8E5M2},
    // u32/u64 have no dtype of ours: left raw.
};

// nvjet letter codes follow cuBLAS's compute-type naming (HSH, TST, SSS:
// A/B type, compute type, C/D type; T = bf16). The data set's sources label
// every nvjet_tst name bf16.
constexpr std::pair<char, DType> kNvjetLetters[] = {
    {'t', kBF16}, {'h', kF16}, {'s', kF32}, {'d', kF64}};

// fmhaSm100aKernel_QkvE4m3OBfloat16H64...: Q/K/V type, then O (output) type.
constexpr Token kFmhaOutput[] = {
    {"OBfloat16", kBF16}, {"OFp16", kF16}, {"OE4m3", kF8E4M3}, {"OE5m2", kF8E5M2},
    {"OFp32", kF32}, {"QkvBfloat16", kBF16}, {"QkvFp16", kF16}};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool PlainToken(std::string_view t, DType* out) {
  for (const Token& row : kTokens) {
    if (row.token == t) {
      *out = row.dtype;
      return true;
    }
  }
  return false;
}

// A type token that is a plain type token, for splitting pairs.
bool IsTypeWord(std::string_view t, DType* out) {
  if (t == "sgemm" || t == "dgemm" || t == "hgemm" || t == "scudnn") return false;
  return PlainToken(t, out);
}

}  // namespace

const TypeRule* FindTypeRule(std::string_view spelling) {
  while (true) {
    for (const TypeRule& row : kTypeRules) {
      if (row.spelling == spelling) return &row;
    }
    size_t colon = spelling.find("::");
    if (colon == std::string_view::npos) return nullptr;
    // Retry without the leading namespace: ATen's OpaqueType lives in
    // several namespaces, all spelled out by the demangler.
    spelling.remove_prefix(colon + 2);
  }
}

TokenHit TokenDType(std::string_view raw_token, DType* out) {
  if (raw_token.empty()) return TokenHit::kNone;
  std::string t = Lower(raw_token);
  for (std::string_view o : kOpaqueTokens) {
    if (t == o) return TokenHit::kOpaque;
  }
  if (PlainToken(t, out)) return TokenHit::kDType;
  // Pairs: "bf16bf16", "e4m3bf16", "tf32f32": input then output type.
  for (size_t cut = 2; cut + 2 <= t.size(); ++cut) {
    DType first, second;
    if (IsTypeWord(std::string_view(t).substr(0, cut), &first) &&
        IsTypeWord(std::string_view(t).substr(cut), &second)) {
      *out = second;
      return TokenHit::kDType;
    }
  }
  // MMA shapes: s16816gemm, h884gemm, i8816gemm.
  if (t.size() > 4 && std::isdigit(static_cast<unsigned char>(t[1]))) {
    size_t d = 1;
    while (d < t.size() && std::isdigit(static_cast<unsigned char>(t[d]))) ++d;
    std::string_view rest = std::string_view(t).substr(d);
    bool mma = d >= 4;  // at least three shape digits
    bool suffix_ok = false;
    for (std::string_view s : kMmaSuffixes) suffix_ok |= rest == s;
    if (mma && suffix_ok) {
      switch (t[0]) {
        case 'h': *out = kF16; return TokenHit::kDType;
        case 's': *out = kF32; return TokenHit::kDType;
        case 'd': *out = kF64; return TokenHit::kDType;
        case 'i': *out = kI8; return TokenHit::kDType;
        default: break;
      }
    }
  }
  return TokenHit::kNone;
}

const FamilyRule& MatchFamily(std::string_view qualified_name, std::string_view full_name) {
  for (const FamilyRule& row : kFamilies) {
    bool hit = false;
    switch (row.match) {
      case MatchKind::kNamePrefix: hit = qualified_name.starts_with(row.needle); break;
      case MatchKind::kNameContains:
        hit = qualified_name.find(row.needle) != std::string_view::npos;
        break;
      case MatchKind::kAnywhere: hit = full_name.find(row.needle) != std::string_view::npos; break;
    }
    if (hit) return row;
  }
  return kCxxFamily;
}

bool NcclOpMovesBytes(std::string_view op_token) {
  for (std::string_view op : kNcclByteOps) {
    if (op == op_token) return true;
  }
  return false;
}

bool NcclTypeToken(std::string_view token, DType* out) {
  std::string t = Lower(token);
  for (const Token& row : kNcclTypes) {
    if (row.token == t) {
      *out = row.dtype;
      return true;
    }
  }
  return false;
}

bool NvjetCodeDType(std::string_view code, DType* out) {
  if (code.size() != 3) return false;
  DType letters[3];
  for (int i = 0; i < 3; ++i) {
    bool known = false;
    for (auto [c, t] : kNvjetLetters) {
      if (c == code[i]) {
        letters[i] = t;
        known = true;
      }
    }
    if (!known) return false;
  }
  *out = letters[2];
  return true;
}

bool FmhaSm100DType(std::string_view name, DType* out) {
  for (const Token& row : kFmhaOutput) {
    if (name.find(row.token) != std::string_view::npos) {
      *out = row.dtype;
      return true;
    }
  }
  return false;
}

}  // namespace numtrace::shim
