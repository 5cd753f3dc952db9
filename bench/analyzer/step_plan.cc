#include "bench/analyzer/step_plan.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/analyzer/synth_random.h"

namespace numtrace::bench {
namespace {

constexpr char kStepFile[] = "6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt";
constexpr char kOtherArchStepFile[] = "6b_seq_trainstep_recsys_V100_rank1of2_fullstep_fullnames.txt";
constexpr char kTritonFile[] = "4_triton_inductor_kernels.txt";
constexpr char kNcclFile[] = "5_nccl_kernels.txt";
constexpr uint64_t kBatch = 2048;  // rows of the recsys model's activations

// Debian's Abseil predates absl::string_view == std::string_view, so the
// std::string_view helpers are spelled out here.
bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

struct NamedLine {
  uint32_t stream = 7;
  std::string name;
};

// Step files are "idx<TAB>stream<TAB>start<TAB>dur<TAB>name"; name lists are
// one name per line. '#' lines are provenance comments.
absl::StatusOr<std::vector<NamedLine>> ReadNames(const std::string& dir, const char* file,
                                                 bool step_file) {
  const std::string path = absl::StrCat(dir, "/", file);
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open kernel-name list ", path));
  std::vector<NamedLine> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!step_file) {
      out.push_back({7, line});
      continue;
    }
    // Four tab-separated columns before the name; names hold no tabs.
    size_t tabs[4];
    size_t at = 0;
    bool ok = true;
    for (size_t& t : tabs) {
      t = line.find('\t', at);
      if (t == std::string::npos) { ok = false; break; }
      at = t + 1;
    }
    if (!ok) continue;
    const uint32_t stream = static_cast<uint32_t>(std::strtoul(line.c_str() + tabs[0] + 1, nullptr, 10));
    out.push_back({stream, line.substr(tabs[3] + 1)});
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no kernel names"));
  return out;
}

uint64_t Pick(Rng& rng, std::initializer_list<uint64_t> menu) {
  return *(menu.begin() + rng.Below(menu.size()));
}

// Shapes are fixed per (name, position in the step), so every step launches
// a kernel with the same buffers, as a real training loop does.
void PlanBuffers(PlannedKernel& k, uint64_t where) {
  Rng rng(Mix(HashName(k.name), where));
  bool from_name = false;
  DType dt = DTypeFromName(k.name, &from_name);
  const DTypeSource src = from_name ? DTypeSource::kName : DTypeSource::kDefault;
  const uint64_t dim = Pick(rng, {64, 128, 256, 512, 1024});
  const uint64_t n = kBatch * dim;
  auto add = [&](DType t, DTypeSource s, Role r, uint64_t count) {
    k.buffers.push_back({static_cast<uint32_t>(k.buffers.size() + 1), t, s, r, count});
  };
  switch (k.kind) {
    case KernelKind::kFill:
      add(dt, src, Role::kOut, n);
      break;
    case KernelKind::kCopy:
      add(DType::kBF16, DTypeSource::kSniffed, Role::kIn, n);
      add(DType::kF32, DTypeSource::kDefault, Role::kOut, n);
      break;
    case KernelKind::kElementwise:
      add(dt, src, Role::kIn, n);
      if (rng.Below(2)) add(dt, src, Role::kIn, n);
      add(dt, src, Role::kOut, n);
      break;
    case KernelKind::kReduction:
      add(dt, src, Role::kIn, n);
      add(dt, src, Role::kOut, rng.Below(2) ? dim : kBatch);
      if (rng.Below(3) == 0) add(DType::kF32, DTypeSource::kDefault, Role::kUnknown, 2 * kBatch);
      break;
    case KernelKind::kGemm: {
      const uint64_t kdim = Pick(rng, {128, 256, 512, 1024});
      add(dt, src, Role::kIn, kBatch * kdim);
      add(dt, src, Role::kIn, kdim * dim);
      add(dt, src, Role::kOut, n);
      break;
    }
    case KernelKind::kTriton: {
      // Inductor names carry no dtype; the compiled region runs in bf16 and
      // its kernel signatures say so.
      add(DType::kBF16, DTypeSource::kSignature, Role::kIn, n);
      add(DType::kBF16, DTypeSource::kSignature, Role::kIn, n);
      const bool reduces = Contains(k.name, "_red_") || Contains(k.name, "_per_");
      add(reduces ? DType::kF32 : DType::kBF16, DTypeSource::kSignature, Role::kOut,
          reduces ? kBatch : n);
      break;
    }
    case KernelKind::kNccl:
      add(dt, src, Role::kOut, uint64_t{1} << (20 + rng.Below(4)));  // a gradient bucket
      break;
    case KernelKind::kOther:
      add(DType::kI64, DTypeSource::kSniffed, Role::kIn, kBatch * 26);
      add(dt, src, Role::kOut, kBatch * 26);
      break;
  }
  k.block = {static_cast<uint32_t>(Pick(rng, {128, 256, 512})), 1, 1};
  const uint64_t out_n = k.buffers.back().n;
  k.grid = {static_cast<uint32_t>(std::clamp<uint64_t>(out_n / (k.block[0] * 4), 1, 65535)), 1,
            1};
}

// The two GEMM names the step uses most, so a swap touches many launches.
std::vector<std::string> MostUsedGemms(const std::vector<NamedLine>& step) {
  std::map<std::string, int> counts;
  for (const NamedLine& l : step) {
    if (ClassifyKernel(l.name) == KernelKind::kGemm) ++counts[l.name];
  }
  std::vector<std::pair<int, std::string>> by_count;
  for (auto& [name, c] : counts) by_count.push_back({-c, name});
  std::sort(by_count.begin(), by_count.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < by_count.size() && i < 2; ++i) out.push_back(by_count[i].second);
  return out;
}

}  // namespace

KernelKind ClassifyKernel(std::string_view name) {
  if (Contains(name, "nccl")) return KernelKind::kNccl;
  if (StartsWith(name, "triton_")) return KernelKind::kTriton;
  if (Contains(name, "FillFunctor")) return KernelKind::kFill;
  if (Contains(name, "direct_copy_kernel")) return KernelKind::kCopy;
  if ((Contains(name, "gemm") && !Contains(name, "fbgemm")) ||
      StartsWith(name, "nvjet"))
    return KernelKind::kGemm;
  if (Contains(name, "reduce") || Contains(name, "Reduce") ||
      Contains(name, "norm") || Contains(name, "Backward"))
    return KernelKind::kReduction;
  if (Contains(name, "elementwise") || Contains(name, "multi_tensor_apply"))
    return KernelKind::kElementwise;
  return KernelKind::kOther;
}

DType DTypeFromName(std::string_view name, bool* from_name) {
  *from_name = true;
  if (Contains(name, "BFloat16") || Contains(name, "bf16")) return DType::kBF16;
  if (Contains(name, "c10::Half") || Contains(name, "f16")) return DType::kF16;
  if (Contains(name, "<float>") || Contains(name, "float,") ||
      Contains(name, "_float") || Contains(name, "sgemm") ||
      Contains(name, "s1688gemm"))
    return DType::kF32;
  if (Contains(name, "<long>")) return DType::kI64;
  if (Contains(name, "<int>")) return DType::kI32;
  if (Contains(name, "<bool>")) return DType::kBool;
  *from_name = false;
  return DType::kF32;  // the recsys model trains in fp32
}

absl::StatusOr<StepPlan> LoadStepPlan(const std::string& names_dir, size_t max_len) {
  absl::StatusOr<std::vector<NamedLine>> step = ReadNames(names_dir, kStepFile, true);
  if (!step.ok()) return step.status();
  absl::StatusOr<std::vector<NamedLine>> other = ReadNames(names_dir, kOtherArchStepFile, true);
  if (!other.ok()) return other.status();
  absl::StatusOr<std::vector<NamedLine>> triton = ReadNames(names_dir, kTritonFile, false);
  if (!triton.ok()) return triton.status();
  absl::StatusOr<std::vector<NamedLine>> nccl = ReadNames(names_dir, kNcclFile, false);
  if (!nccl.ok()) return nccl.status();

  StepPlan plan;
  for (const NamedLine& l : *triton) {
    // Only counter-suffixed Inductor names: B renames their counters.
    if (StartsWith(l.name, "triton_poi_fused") || StartsWith(l.name, "triton_red_fused") ||
        StartsWith(l.name, "triton_per_fused"))
      plan.triton_names.push_back(l.name);
  }
  if (plan.triton_names.empty())
    return absl::InvalidArgumentError(absl::StrCat(names_dir, "/", kTritonFile, ": no Inductor names"));

  std::vector<NamedLine> seq = *step;
  if (max_len > 0 && seq.size() > max_len) seq.resize(max_len);
  for (const NamedLine& l : seq) {
    KernelKind kind = ClassifyKernel(l.name);
    if (kind == KernelKind::kCopy && plan.cast_name.empty()) plan.cast_name = l.name;
    if (kind == KernelKind::kFill && plan.fill_name.empty() && Contains(l.name, "<float>"))
      plan.fill_name = l.name;
  }
  if (plan.cast_name.empty()) plan.cast_name = (*step)[4].name;
  if (plan.fill_name.empty()) plan.fill_name = (*step)[0].name;

  // A torch.compile'd submodule a third of the way in: ~2% of the step.
  const size_t region_at = seq.size() / 3;
  const size_t region_len = std::max<size_t>(4, seq.size() / 48);
  std::vector<NamedLine> full(seq.begin(), seq.begin() + region_at);
  for (size_t i = 0; i < region_len; ++i) {
    full.push_back({7, plan.triton_names[(i * 7) % plan.triton_names.size()]});
  }
  full.insert(full.end(), seq.begin() + region_at, seq.end());
  // Data-parallel gradient sync with a current NCCL's kernel.
  for (const NamedLine& l : *nccl) {
    if (StartsWith(l.name, "ncclDevKernel_AllReduce_Sum_bf16")) {
      full.push_back({20, l.name});
      break;
    }
  }

  plan.kernels.reserve(full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    PlannedKernel k;
    k.name = full[i].name;
    k.stream = full[i].stream;
    k.kind = ClassifyKernel(k.name);
    PlanBuffers(k, i);
    plan.kernels.push_back(std::move(k));
  }

  plan.gemm_originals = MostUsedGemms(seq);
  std::vector<std::string> other_gemms = MostUsedGemms(*other);
  for (size_t i = 0; i < plan.gemm_originals.size(); ++i) {
    plan.gemm_replacements.push_back(i < other_gemms.size() ? other_gemms[i]
                                                            : "volta_sgemm_128x32_nn");
  }
  return plan;
}

}  // namespace numtrace::bench
