#include "bench/analyzer/trace_pair_generator.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "bench/analyzer/buffered_file.h"
#include "bench/analyzer/stats_synth.h"
#include "bench/analyzer/synth_random.h"
#include "common/format/jsonl_writer.h"

namespace numtrace::bench {
namespace {

constexpr double kNoiseMax = 2e-6;       // reduction-order noise, far within rtol 1e-5
constexpr double kDivergenceRel = 1e-3;  // what a real bug looks like at first

// `..._fused_add_mul_3` -> `..._fused_add_mul_4`: what a code change does to
// Inductor's per-graph counters.
std::string ShiftCounter(const std::string& name) {
  size_t end = name.size();
  size_t start = end;
  while (start > 0 && absl::ascii_isdigit(name[start - 1])) --start;
  if (start == end || start == 0 || name[start - 1] != '_') return name + "_1";
  uint64_t v = std::stoull(name.substr(start));
  return absl::StrCat(name.substr(0, start), v + 1);
}

// Where in each step B departs from A's kernel sequence.
struct StepEdits {
  size_t cast_after = 0, fill_after = 0, missing = kNoSeq;
  size_t fuse_first = kNoSeq, fuse_second = kNoSeq;  // B runs both as one kernel
};

StepEdits PlanEdits(const StepPlan& plan) {
  const size_t p = plan.kernels.size();
  StepEdits e;
  e.cast_after = p / 10;
  e.fill_after = p * 45 / 100;
  auto elementwise = [&](size_t i) { return plan.kernels[i].kind == KernelKind::kElementwise; };
  for (size_t i = p * 3 / 10; i < p; ++i) {
    if (elementwise(i)) { e.missing = i; break; }
  }
  for (size_t i = p * 7 / 10; i + 1 < p; ++i) {
    if (i != e.missing && i + 1 != e.missing && elementwise(i) && elementwise(i + 1) &&
        plan.kernels[i].stream == plan.kernels[i + 1].stream) {
      e.fuse_first = i;
      e.fuse_second = i + 1;
      break;
    }
  }
  return e;
}

class PairWriter {
 public:
  PairWriter(const StepPlan& plan, const PairOptions& opt, const std::string& path_a,
             const std::string& path_b)
      : plan_(plan), opt_(opt), edits_(PlanEdits(plan)), a_(path_a), b_(path_b) {
    diverge_at_ = opt.diverge_at != kNoSeq ? opt.diverge_at : opt.kernels * 6 / 10;
    nan_at_ = diverge_at_ + (opt.kernels - std::min(diverge_at_, opt.kernels)) / 2;
    for (size_t i = 0; i < plan.gemm_originals.size(); ++i)
      swapped_.push_back({plan.gemm_originals[i], plan.gemm_replacements[i]});
    const std::string& fused_base =
        plan.triton_names[Mix(opt.seed, 0xf05e) % plan.triton_names.size()];
    fused_name_ = ShiftCounter(fused_base.find("poi") != std::string::npos
                                   ? fused_base
                                   : std::string("triton_poi_fused_add_mul_7"));
  }

  absl::StatusOr<PairSummary> Run() {
    WriteHeader(a_, "A", false);
    WriteHeader(b_, "B", true);
    const size_t p = plan_.kernels.size();
    for (uint64_t cycle = 0; a_seq_ < opt_.kernels; ++cycle) {
      for (size_t pos = 0; pos < p && a_seq_ < opt_.kernels; ++pos) EmitPosition(cycle, pos);
    }
    WriteFooter(a_, a_seq_, a_launch_);
    WriteFooter(b_, b_seq_, b_launch_);
    if (absl::Status s = a_.Close(); !s.ok()) return s;
    if (absl::Status s = b_.Close(); !s.ok()) return s;
    summary_.a_kernels = a_seq_;
    summary_.b_kernels = b_seq_;
    summary_.a_bytes = a_.bytes();
    summary_.b_bytes = b_.bytes();
    return summary_;
  }

 private:
  // One planned launch of step `cycle`: A's kernel, then B's version of it
  // (absent, fused, renamed or as is) and any kernel B adds after it.
  void EmitPosition(uint64_t cycle, size_t pos) {
    const PlannedKernel& k = plan_.kernels[pos];
    const uint64_t key = Mix(opt_.seed, cycle, pos);
    const uint64_t a_seq = a_seq_;
    Emit(a_, k, k.name, key, cycle, /*is_b=*/false, Perturbation{});

    if (pos == edits_.missing || pos == edits_.fuse_first) {
      // B skipped it, or folded it into the next kernel.
    } else {
      std::string_view name = k.name;
      bool noisy = pos == edits_.fuse_second ||
                   (k.kind == KernelKind::kReduction && Mix(opt_.seed, pos, 0x7ed) % 10 == 0);
      std::string renamed;
      if (pos == edits_.fuse_second) {
        name = fused_name_;
      } else if (k.kind == KernelKind::kTriton) {
        renamed = ShiftCounter(k.name);
        name = renamed;
      } else {
        for (const auto& [from, to] : swapped_) {
          if (k.name == from) { name = to; noisy = true; }
        }
      }
      if (name == k.name) MaybeStartDivergence(k, a_seq);  // where both runs name it alike
      Emit(b_, k, name, key, cycle, true, BPerturbation(key, noisy, a_seq));
    }
    if (pos == edits_.cast_after) EmitExtra(cycle, pos, plan_.cast_name, KernelKind::kCopy);
    if (pos == edits_.fill_after) EmitExtra(cycle, pos, plan_.fill_name, KernelKind::kFill);
  }

  // The planted bug shows first in a kernel whose float output it can move
  // (not a fill, not an index kernel), so the expected first divergence is
  // exactly the kernel the summary names.
  void MaybeStartDivergence(const PlannedKernel& k, uint64_t a_seq) {
    if (diverged_ || a_seq < diverge_at_ || k.kind == KernelKind::kFill) return;
    bool float_out = false;
    for (const PlannedBuffer& b : k.buffers) float_out |= b.role != Role::kIn && IsFloat(b.dtype);
    if (!float_out) return;
    diverged_ = true;
    summary_.divergence_a_seq = a_seq;
    summary_.divergence_b_seq = b_seq_;
  }

  Perturbation BPerturbation(uint64_t key, bool noisy, uint64_t a_seq) {
    Perturbation p;
    if (diverged_) {
      // Errors grow as they propagate through later kernels.
      p.rel = std::min(0.5, kDivergenceRel * (1.0 + static_cast<double>(a_seq - diverge_at_) / 500));
      p.hash_salt = 0xd1;
      if (opt_.plant_nan && a_seq >= nan_at_) p.nan_fraction = 1e-4;
    } else if (noisy) {
      p.rel = kNoiseMax * (0.05 + Rng(key).Uniform());
      p.hash_salt = 0x2a;
    }
    return p;
  }

  void EmitExtra(uint64_t cycle, size_t pos, const std::string& name, KernelKind kind) {
    PlannedKernel extra;
    extra.name = name;
    extra.kind = kind;
    const uint64_t n = 2048 * 256;
    if (kind == KernelKind::kCopy) {
      extra.buffers = {{1, DType::kBF16, DTypeSource::kSniffed, Role::kIn, n},
                       {2, DType::kF32, DTypeSource::kDefault, Role::kOut, n}};
    } else {
      extra.buffers = {{1, DType::kF32, DTypeSource::kName, Role::kOut, n}};
    }
    extra.grid = {static_cast<uint32_t>(n / 512), 1, 1};
    extra.block = {128, 1, 1};
    const uint64_t key = Mix(opt_.seed ^ 0xb0b, cycle, pos);
    Emit(b_, extra, name, key, cycle, true,
         BPerturbation(key, false, a_seq_ == 0 ? 0 : a_seq_ - 1));
  }

  void Emit(BufferedFile& out, const PlannedKernel& k, std::string_view name, uint64_t key,
            uint64_t cycle, bool is_b, const Perturbation& p) {
    uint64_t& seq = is_b ? b_seq_ : a_seq_;
    uint64_t& launch = is_b ? b_launch_ : a_launch_;
    rec_.seq = seq++;
    // Launches the capture filter skipped (small host-side kernels).
    launch += 1 + (Mix(key, is_b) % 5 == 0 ? 1 : 0);
    rec_.launch = launch - 1;
    rec_.step = static_cast<int64_t>(kFirstStep + cycle);
    rec_.name.assign(name);
    rec_.stream = k.stream;
    rec_.grid = k.grid;
    rec_.block = k.block;
    rec_.buffers.resize(k.buffers.size());
    const uint64_t base = is_b ? 0x7f5c00000000ull : 0x7f3a40000000ull;
    for (size_t i = 0; i < k.buffers.size(); ++i) {
      const PlannedBuffer& pb = k.buffers[i];
      BufferRecord& b = rec_.buffers[i];
      b.arg = pb.arg;
      b.addr = base + ((Mix(HashName(k.name), i) % (1ull << 24)) << 12);
      b.offset = 0;
      b.bytes = pb.n * DTypeSize(pb.dtype);
      b.dtype = pb.dtype;
      b.dtype_from = pb.dtype_from;
      b.role = pb.role;
      const bool is_out = pb.role != Role::kIn;
      // Inputs were produced upstream, so in B they diverge along with
      // everything else.
      const uint64_t value_key = is_out ? Mix(key, i) : Mix(key, i, 0x1a);
      // Fills write constants and index kernels follow the data, not the
      // numerics: neither changes when B's values do.
      Perturbation bp = p;
      if (!IsFloat(pb.dtype) || k.kind == KernelKind::kFill) bp = Perturbation{};
      if (!is_out) bp.nan_fraction = 0;
      b.stats = SynthStats(value_key, pb.dtype, pb.n, {k.kind == KernelKind::kFill}, bp);
      if (is_b && bp.nan_fraction > 0 && summary_.nan_b_seq == kNoSeq) summary_.nan_b_seq = rec_.seq;
    }
    AppendJsonLine(rec_, out.buffer());
    out.MaybeFlush();
  }

  void WriteHeader(BufferedFile& out, const std::string& label, bool is_b) {
    TraceHeader h;
    h.producer = "numtrace-make-pair 0.1.0";
    RunInfo run;
    run.label = label;
    run.argv = {"torchrun", "--nproc-per-node=8", "train.py", "--model=dlrm"};
    if (is_b) run.argv.push_back("--compile");
    run.pid = 4242 + (is_b ? 1000 : 0);
    run.rank = 0;
    run.world_size = 8;
    run.host = "node7";
    run.start_time = is_b ? "2026-11-29T12:00:00Z" : "2026-11-29T11:00:00Z";
    h.run = run;
    h.device = DeviceInfo{0, "NVIDIA H200", "9.0", "580.159", "13.0"};
    CaptureInfo cap;
    const uint64_t steps = (opt_.kernels + plan_.kernels.size() - 1) / plan_.kernels.size();
    for (uint64_t s = 0; s < steps; ++s) cap.steps.push_back(static_cast<int64_t>(kFirstStep + s));
    cap.outputs = "changed";
    cap.selector = "all kernels";
    h.capture = cap;
    AppendJsonLine(h, out.buffer());
    if (is_b) {
      NoteRecord note;
      note.launch = 0;
      note.level = "info";
      note.msg = "synthetic trace from numtrace-make-pair";
      AppendJsonLine(note, out.buffer());
    }
  }

  void WriteFooter(BufferedFile& out, uint64_t kernels, uint64_t launches) {
    FooterRecord f;
    f.kernels = kernels;
    f.launches = launches;
    f.end_time = "2026-11-29T11:30:00Z";
    AppendJsonLine(f, out.buffer());
  }

  static constexpr int64_t kFirstStep = 1;
  const StepPlan& plan_;
  const PairOptions& opt_;
  StepEdits edits_;
  BufferedFile a_, b_;
  std::vector<std::pair<std::string, std::string>> swapped_;
  std::string fused_name_;
  uint64_t diverge_at_ = 0, nan_at_ = 0;
  bool diverged_ = false;
  uint64_t a_seq_ = 0, b_seq_ = 0, a_launch_ = 0, b_launch_ = 0;
  KernelRecord rec_;  // reused: no allocation per kernel once warm
  PairSummary summary_;
};

}  // namespace

absl::StatusOr<PairSummary> WriteTracePair(const StepPlan& plan, const PairOptions& options,
                                           const std::string& path_a, const std::string& path_b) {
  if (plan.kernels.empty()) return absl::InvalidArgumentError("empty step plan");
  PairWriter writer(plan, options, path_a, path_b);
  return writer.Run();
}

}  // namespace numtrace::bench
