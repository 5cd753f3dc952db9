#include "analyzer/judge/origin_hints.h"

#include <regex>
#include <string>
#include <vector>

namespace numtrace::analyzer {
namespace {

// Order matters: specific families before the generic "atomic" one, and
// NCCL first: its kernel names (ncclDevKernel_ReduceScatter_...) hold
// "scatter", and a collective is no index_add.
constexpr OriginHint kFamilies[] = {
    {"NCCL collective", "nccl|all_?reduce|reduce_?scatter",
     "the reduction order across ranks varies with the algorithm and protocol: fix NCCL_ALGO "
     "(e.g. Ring) and NCCL_PROTO, the same world size and topology, or a deterministic all-reduce"},
    {"embedding backward with atomics", "embedding_(dense_)?backward|embedding_backward_feature",
     "torch.use_deterministic_algorithms(True) makes embedding backward deterministic"},
    {"index_add/scatter with atomics",
     "indexFunc|index_add|index_put|indexing_backward|scatter|gather_backward|put_kernel",
     "its sums land in thread-scheduling order: torch.use_deterministic_algorithms(True)"},
    {"split-K GEMM", "splitk|split_k|splitkreduce|gemv2t|gemmk1|reduce_1block",
     "cuBLAS split-K sums partial products in varying order: CUBLAS_WORKSPACE_CONFIG=:4096:8 and "
     "torch.use_deterministic_algorithms(True)"},
    {"cuDNN algorithm choice", "cudnn|conv2d_grouped|wgrad|dgrad|implicit_convolve",
     "torch.backends.cudnn.deterministic = True and torch.backends.cudnn.benchmark = False"},
    {"Triton/Inductor kernel", "^triton_",
     "Inductor may use atomic_add (scatter, index_put) or split reductions: "
     "torch.use_deterministic_algorithms(True), or torch._inductor.config.deterministic = True"},
    {"atomics", "atomic",
     "the kernel accumulates with atomicAdd: its result depends on thread scheduling; use a "
     "deterministic variant (torch.use_deterministic_algorithms(True) for ATen ops)"},
};

}  // namespace

std::span<const OriginHint> KnownOriginFamilies() { return kFamilies; }

const OriginHint* HintForKernel(std::string_view kernel_name) {
  static const std::vector<std::regex> compiled = [] {
    std::vector<std::regex> out;
    for (const OriginHint& f : kFamilies) {
      out.emplace_back(std::string(f.pattern), std::regex::ECMAScript | std::regex::icase);
    }
    return out;
  }();
  for (size_t i = 0; i < compiled.size(); ++i) {
    if (std::regex_search(kernel_name.begin(), kernel_name.end(), compiled[i])) return &kFamilies[i];
  }
  return nullptr;
}

}  // namespace numtrace::analyzer
