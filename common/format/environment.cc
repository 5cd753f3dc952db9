#include "common/format/environment.h"

#include <array>
#include <initializer_list>

namespace numtrace {
namespace {

using A = EnvAffects;

constexpr std::string_view kTf32Matmul =
    "TF32: fp32 matmuls round inputs to 10 mantissa bits, relative differences near 1e-3";
constexpr std::string_view kTf32Conv =
    "TF32: fp32 convolutions round inputs to 10 mantissa bits, relative differences near 1e-3";

// Display order: the settings that change numbers within one machine first
// (precision, determinism), then what decides which kernels run (libraries,
// GPU), then bookkeeping. Exact keys before the family that covers them.
constexpr EnvironmentKey kKeys[] = {
    {"torch.float32_matmul_precision", true, A::kMatmul,
     "fp32 matmul precision: 'high' allows TF32 (10 mantissa bits), 'medium' bf16 inputs; relative differences near 1e-3"},
    {"torch.matmul.allow_tf32", true, A::kMatmul, kTf32Matmul},
    {"torch.matmul.fp32_precision", true, A::kMatmul, kTf32Matmul},
    {"torch.cudnn.allow_tf32", true, A::kConv, kTf32Conv},
    {"torch.cudnn.conv.fp32_precision", true, A::kConv, kTf32Conv},
    {"env.NVIDIA_TF32_OVERRIDE", true, A::kMatmul,
     "NVIDIA_TF32_OVERRIDE=0 turns TF32 off in every CUDA library, whatever torch allows"},
    {"env.TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", true, A::kMatmul,
     "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 lets cuBLAS use TF32 for fp32 matmuls (10 mantissa bits)"},
    {"torch.matmul.allow_fp16_reduced_precision_reduction", true, A::kMatmul,
     "fp16 GEMMs may add partial sums in fp16: larger rounding in long reductions"},
    {"torch.matmul.allow_bf16_reduced_precision_reduction", true, A::kMatmul,
     "bf16 GEMMs may add partial sums in bf16: larger rounding in long reductions"},
    {"torch.autocast.cuda", true, A::kAll,
     "autocast runs eligible ops in this dtype: fp16/bf16 precision instead of fp32"},
    {"torch.deterministic_algorithms", true, A::kAtomics,
     "non-deterministic algorithms allowed: atomics (scatter, index_add, some backward kernels) add in a run-dependent order"},
    {"torch.cudnn.deterministic", true, A::kConv,
     "cuDNN may pick non-deterministic convolution algorithms: run-to-run differences"},
    {"torch.cudnn.benchmark", true, A::kConv,
     "cuDNN benchmarks convolution algorithms per run: another algorithm, another rounding"},
    {"torch.cudnn.enabled", true, A::kConv,
     "convolutions run in cuDNN or in ATen's own kernels: other algorithms"},
    {"env.CUBLAS_WORKSPACE_CONFIG", true, A::kMatmul,
     "cuBLAS without a fixed workspace (:4096:8 or :16:8) may split GEMM reductions differently per run"},
    {"torch.fill_uninitialized_memory", true, A::kAll,
     "uninitialized memory filled with NaN (deterministic mode): reads of uninitialized memory change"},
    {"torch.sdp.flash", true, A::kAttention, "flash attention allowed: another attention kernel, another reduction order"},
    {"torch.sdp.mem_efficient", true, A::kAttention,
     "memory-efficient attention allowed: another attention kernel, another reduction order"},
    {"torch.sdp.math", true, A::kAttention, "math attention allowed: attention in plain matmuls and softmax"},
    {"torch.sdp.cudnn", true, A::kAttention, "cuDNN attention allowed: another attention kernel, another reduction order"},
    {"inductor.emulate_precision_casts", true, A::kAll,
     "compiled code rounds intermediates to their dtype as eager does (or keeps them in fp32)"},
    {"inductor.fallback_random", true, A::kAll, "random numbers from eager's generator or from Inductor's own"},
    {"inductor.max_autotune", true, A::kMatmul, "GEMM kernels chosen by benchmarking: another kernel, another reduction order"},
    {"inductor.coordinate_descent_tuning", true, A::kAll, "tuned block sizes: another reduction order in compiled kernels"},
    {"inductor.*", true, A::kAll, "an Inductor setting: compiled kernels generated differently"},
    {"env.NCCL_ALGO", true, A::kCollective, "another collective algorithm (ring, tree): all-reduce adds in another order"},
    {"env.NCCL_PROTO", true, A::kCollective, "another NCCL protocol: collectives split and add data differently"},
    {"env.NCCL_*CHANNELS*", true, A::kCollective, "another NCCL channel count: all-reduce adds in another order"},
    {"env.NVTE_*", true, A::kAll, "a Transformer Engine setting (e.g. NVTE_ALLOW_NONDETERMINISTIC_ALGO): other kernels in TE layers"},
    {"env.TORCHINDUCTOR_*", true, A::kAll, "an Inductor setting: compiled kernels generated differently"},
    {"env.OMP_NUM_THREADS", true, A::kAll, "another CPU thread count: CPU reductions split differently"},
    {"job.world_size", true, A::kCollective, "another world size: other data per rank, collectives add in another order"},
    {"torch.version", true, A::kAll, "another PyTorch: other kernels, other defaults"},
    {"torch.git", true, A::kAll, "another PyTorch build: other kernels, other defaults"},
    {"torch.cuda", true, A::kAll, "PyTorch built for another CUDA: other kernels"},
    {"torch.cudnn", true, A::kConv, "another cuDNN (as torch reports it): other convolution and attention kernels"},
    {"torch.nccl", true, A::kCollective, "another NCCL (as torch reports it): other collective kernels"},
    {"triton.version", true, A::kAll, "another Triton: compiled kernels generated differently"},
    {"cublas.version", true, A::kMatmul, "another cuBLAS: other GEMM kernels and heuristics (split-K, tile sizes)"},
    {"cudnn.version", true, A::kConv, "another cuDNN: other convolution and attention kernels"},
    {"nccl.version", true, A::kCollective, "another NCCL: other collective kernels and reduction orders"},
    {"cuda.runtime", true, A::kAll, "another CUDA runtime: other library kernels"},
    {"gpu.name", true, A::kAll, "another GPU model: other kernels and tile sizes, another reduction order"},
    {"gpu.cc", true, A::kAll, "another compute capability: other kernels"},
    {"gpu.sm_count", true, A::kAll, "another SM count: split-K and persistent kernels divide work differently"},
    {"driver.version", true, A::kAll, "another driver: JIT-compiled kernels may differ"},
    {"job.git", false, A::kAll, "the job's code: another commit or uncommitted changes"},
    {"python.version", false, A::kNothing, "another Python"},
    {"env.PYTORCH_CUDA_ALLOC_CONF", false, A::kNothing,
     "allocator settings: other addresses, the same numbers unless a kernel reads uninitialized memory"},
    {"env.PYTORCH_ALLOC_CONF", false, A::kNothing,
     "allocator settings: other addresses, the same numbers unless a kernel reads uninitialized memory"},
    {"env.CUDA_LAUNCH_BLOCKING", false, A::kNothing, "synchronous launches: other timing, the same numbers unless the job races"},
    {"gpu.uuid", false, A::kNothing, "another physical GPU"},
    {"job.cwd", false, A::kNothing, "another working directory"},
    {"job.command", false, A::kNothing, "another command line"},
};

// The exact names of the env.* entries above, for readers that can only
// ask getenv (tests with a fake environment); families are read from the
// whole environment.
constexpr std::string_view kRecordedNames[] = {
    "CUBLAS_WORKSPACE_CONFIG", "NCCL_ALGO", "NCCL_PROTO", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "CUDA_LAUNCH_BLOCKING", "OMP_NUM_THREADS", "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
};

// `pattern` holds at most '*'s as wildcards for any run of characters.
bool Matches(std::string_view pattern, std::string_view s) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == s;
  if (s.substr(0, star) != pattern.substr(0, star)) return false;
  pattern.remove_prefix(star + 1);
  s.remove_prefix(star);
  for (size_t i = 0; i <= s.size(); ++i) {
    if (Matches(pattern, s.substr(i))) return true;
  }
  return false;
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool AnyOf(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (Contains(s, p)) return true;
  }
  return false;
}

}  // namespace

std::span<const EnvironmentKey> EnvironmentKeys() { return kKeys; }

const EnvironmentKey* FindEnvironmentKey(std::string_view key) {
  for (const EnvironmentKey& k : kKeys) {
    if (Matches(k.key, key)) return &k;
  }
  return nullptr;
}

size_t EnvironmentKeyOrder(std::string_view key) {
  const EnvironmentKey* k = FindEnvironmentKey(key);
  return k == nullptr ? std::size(kKeys) : static_cast<size_t>(k - kKeys);
}

bool IsRecordedVariable(std::string_view name) {
  if (name.empty()) return false;
  for (const EnvironmentKey& k : kKeys) {
    if (k.key.substr(0, kEnvVariablePrefix.size()) != kEnvVariablePrefix) continue;
    if (Matches(k.key.substr(kEnvVariablePrefix.size()), name)) return true;
  }
  return false;
}

std::span<const std::string_view> RecordedVariableNames() { return kRecordedNames; }

void SetEnvironmentValue(EnvironmentValues* values, std::string_view key, std::string_view value) {
  for (auto& [k, v] : *values) {
    if (k == key) {
      v = std::string(value);
      return;
    }
  }
  values->emplace_back(std::string(key), std::string(value));
}

void MergeEnvironment(EnvironmentValues* base, const EnvironmentValues& later) {
  for (const auto& [k, v] : later) SetEnvironmentValue(base, k, v);
}

const std::string* FindEnvironmentValue(const EnvironmentValues& values, std::string_view key) {
  for (const auto& [k, v] : values) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool EnvironmentAffectsLaunch(EnvAffects affects, std::string_view name, std::string_view op) {
  switch (affects) {
    case A::kNothing: return false;
    case A::kAll: return true;
    case A::kMatmul:
      return AnyOf(name, {"gemm", "GEMM", "cutlass", "cublas", "xmma", "matmul", "conv", "wgrad", "dgrad"}) ||
             AnyOf(op, {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
                        "aten::convolution", "aten::_convolution", "aten::cudnn_convolution", "aten::addmv",
                        "aten::mv", "aten::dot"});
    case A::kConv:
      return AnyOf(name, {"conv", "cudnn", "wgrad", "dgrad", "implicit_gemm"}) ||
             AnyOf(op, {"convolution", "conv1d", "conv2d", "conv3d"});
    case A::kAttention:
      return AnyOf(name, {"flash", "fmha", "attention", "attn"}) ||
             AnyOf(op, {"scaled_dot_product", "attention"});
    case A::kAtomics:
      return AnyOf(name, {"atomic", "scatter", "index_add", "indexFunc", "index_put", "embedding_backward",
                          "embedding_dense_backward", "indexing_backward", "cumsum", "histc", "bincount"}) ||
             AnyOf(op, {"scatter", "index_add", "index_put", "embedding_dense_backward", "cumsum", "histc",
                        "bincount", "_index_put_impl"});
    case A::kCollective:
      return AnyOf(name, {"nccl", "allreduce", "all_reduce", "reduce_scatter"}) || AnyOf(op, {"c10d::"});
  }
  return false;
}

std::vector<RunToRunRisk> RunToRunRisks(const EnvironmentValues& values, bool cuda, int64_t world_size) {
  std::vector<RunToRunRisk> out;
  auto value = [&](std::string_view key) { return FindEnvironmentValue(values, key); };
  if (const std::string* v = value("torch.deterministic_algorithms"); v != nullptr && *v == "false") {
    out.push_back({"torch.deterministic_algorithms",
                   "deterministic algorithms are off: kernels that add with atomics may differ run to run "
                   "(torch.use_deterministic_algorithms(True))"});
  }
  if (cuda) {
    const std::string* ws = value("env.CUBLAS_WORKSPACE_CONFIG");
    if (ws == nullptr || (*ws != ":4096:8" && *ws != ":16:8")) {
      out.push_back({"env.CUBLAS_WORKSPACE_CONFIG",
                     ws == nullptr ? "CUBLAS_WORKSPACE_CONFIG is unset: cuBLAS may reduce differently run to run "
                                     "(set :4096:8 or :16:8)"
                                   : "CUBLAS_WORKSPACE_CONFIG=" + *ws +
                                         " is neither :4096:8 nor :16:8: cuBLAS may reduce differently run to run"});
    }
    if (const std::string* v = value("torch.cudnn.benchmark"); v != nullptr && *v == "true") {
      out.push_back({"torch.cudnn.benchmark",
                     "cudnn.benchmark is on: each run may pick another convolution algorithm "
                     "(torch.backends.cudnn.benchmark = False)"});
    }
    if (const std::string* v = value("torch.cudnn.deterministic"); v != nullptr && *v == "false") {
      const std::string* det = value("torch.deterministic_algorithms");
      // Deterministic algorithms on makes cuDNN deterministic too.
      if (det == nullptr || *det == "false") {
        out.push_back({"torch.cudnn.deterministic",
                       "cudnn.deterministic is off: cuDNN may pick non-deterministic convolution algorithms"});
      }
    }
  }
  if (world_size > 1 && value("env.NCCL_ALGO") == nullptr) {
    out.push_back({"env.NCCL_ALGO",
                   "several ranks and NCCL_ALGO unpinned: NCCL may pick another all-reduce algorithm run to run "
                   "(e.g. NCCL_ALGO=Ring)"});
  }
  return out;
}

}  // namespace numtrace
