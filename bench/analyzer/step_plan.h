// File: bench/analyzer/step_plan.h
//
// The kernel sequence of one synthetic training step, built from the real
// kernel names in test/data/kernel-names: the recsys A100 step (6a,
// ATen + CUTLASS GEMMs + NCCL), a torch.compile region of Inductor Triton
// kernels spliced in, and a bf16 gradient all-reduce at the end. The trace
// pair generator cycles this plan; every planned kernel carries the buffer
// layout (count, dtype, role, size) it launches with in every step, so runs
// agree on shapes the way real training steps do.
//
// Example:
//   absl::StatusOr<StepPlan> plan = LoadStepPlan("test/data/kernel-names",
//                                                /*max_len=*/0);
//   plan->kernels.size();   // ~1490
//   plan->kernels[0].name;  // "void at::native::vectorized_elementwise_kernel<4, ..."
#ifndef NUMTRACE_BENCH_ANALYZER_STEP_PLAN_H_
#define NUMTRACE_BENCH_ANALYZER_STEP_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/format/dtype.h"
#include "common/format/records.h"

namespace numtrace::bench {

// What a kernel does, as far as its buffers' statistics care.
enum class KernelKind : uint8_t { kElementwise, kFill, kCopy, kReduction, kGemm, kTriton, kNccl, kOther };

struct PlannedBuffer {
  uint32_t arg = 0;
  DType dtype = DType::kF32;
  DTypeSource dtype_from = DTypeSource::kDefault;
  Role role = Role::kIn;
  uint64_t n = 0;  // elements
};

struct PlannedKernel {
  std::string name;
  KernelKind kind = KernelKind::kOther;
  uint32_t stream = 7;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{128, 1, 1};
  std::vector<PlannedBuffer> buffers;
};

struct StepPlan {
  std::vector<PlannedKernel> kernels;
  // B runs two of A's GEMM names (the most used ones) as another
  // architecture's kernels: gemm_originals[i] -> gemm_replacements[i].
  std::vector<std::string> gemm_originals;
  std::vector<std::string> gemm_replacements;
  std::string cast_name;   // an extra dtype cast B launches
  std::string fill_name;   // an extra fill B launches
  std::vector<std::string> triton_names;  // Inductor names, for fusions in B
};

// Reads the names under `names_dir` and builds the plan. `max_len` > 0 keeps
// only the first max_len kernels of the 6a step (small examples); the
// compiled region shrinks with it. Fails naming the file that is missing or
// has no usable line.
absl::StatusOr<StepPlan> LoadStepPlan(const std::string& names_dir, size_t max_len);

// Classification and dtype guess from a kernel name (exposed for tests).
KernelKind ClassifyKernel(std::string_view name);
DType DTypeFromName(std::string_view name, bool* from_name);

}  // namespace numtrace::bench

#endif  // NUMTRACE_BENCH_ANALYZER_STEP_PLAN_H_
