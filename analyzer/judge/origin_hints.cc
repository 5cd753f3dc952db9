#include "analyzer/judge/origin_hints.h"

#include <memory>
#include <string>
#include <vector>

#include "re2/re2.h"

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
  // RE2: the names come from traces (any length); matching stays linear.
  static const std::vector<std::unique_ptr<re2::RE2>> compiled = [] {
    std::vector<std::unique_ptr<re2::RE2>> out;
    re2::RE2::Options options;
    options.set_case_sensitive(false);
    options.set_never_capture(true);
    for (const OriginHint& f : kFamilies) out.push_back(std::make_unique<re2::RE2>(f.pattern, options));
    return out;
  }();
  for (size_t i = 0; i < compiled.size(); ++i) {
    if (re2::RE2::PartialMatch(kernel_name, *compiled[i])) return &kFamilies[i];
  }
  return nullptr;
}

}  // namespace numtrace::analyzer
