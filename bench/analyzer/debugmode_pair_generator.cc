#include "bench/analyzer/debugmode_pair_generator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/analyzer/buffered_file.h"
#include "bench/analyzer/stats_synth.h"
#include "bench/analyzer/synth_random.h"

namespace numtrace::bench {
namespace {

constexpr int kLayers = 32;
constexpr uint64_t kTokens = 8 * 2048;  // batch x sequence

// Output shapes of a Llama-3-8B block, as [8, 2048, last] or [8, 2048, 1].
enum class Shape : uint8_t { kDim, kKv, kHidden, kRow, kHeads, kVocab };

uint64_t LastDim(Shape s) {
  switch (s) {
    case Shape::kDim: return 4096;
    case Shape::kKv: return 1024;
    case Shape::kHidden: return 14336;
    case Shape::kRow: return 1;
    case Shape::kHeads: return 4096;
    case Shape::kVocab: return 128256;
  }
  return 1;
}

struct OpSpec {
  const char* module;  // under `layers.<i>.`; "" is the layer itself
  const char* op;
  Shape shape;
  bool f32;  // float32 (norm internals, loss) rather than bfloat16
  int line;  // source line of the op in the model file
  bool b_extra = false;    // only B runs it
  bool b_missing = false;  // only A runs it
};

// One transformer block, forward. B casts to float32 at the start of every
// attention_norm instead of before its last mul (shifting the op counters of
// the ops between), and reshapes the wk projection with `view` instead of
// `_unsafe_view`. Each module runs as many ops in B as in A, so its backward
// ops keep their keys.
const std::vector<OpSpec>& ForwardOps() {
  static const std::vector<OpSpec> ops = {
      {"attention_norm", "_to_copy", Shape::kDim, true, 61, /*b_extra=*/true},
      {"attention_norm", "pow", Shape::kDim, true, 62},
      {"attention_norm", "mean", Shape::kRow, true, 62},
      {"attention_norm", "add", Shape::kRow, true, 62},
      {"attention_norm", "rsqrt", Shape::kRow, true, 62},
      {"attention_norm", "mul", Shape::kDim, true, 62},
      {"attention_norm", "_to_copy", Shape::kDim, false, 63, false, /*b_missing=*/true},
      {"attention_norm", "mul", Shape::kDim, false, 64},
      {"attention.wq", "mm", Shape::kDim, false, 203},
      {"attention.wq", "_unsafe_view", Shape::kDim, false, 203},
      {"attention.wk", "mm", Shape::kKv, false, 204},
      {"attention.wk", "_unsafe_view", Shape::kKv, false, 204, false, /*b_missing=*/true},
      {"attention.wk", "view", Shape::kKv, false, 204, /*b_extra=*/true},
      {"attention.wv", "mm", Shape::kKv, false, 205},
      {"attention.wv", "_unsafe_view", Shape::kKv, false, 205},
      {"attention", "view_as_complex", Shape::kDim, true, 142},
      {"attention", "mul", Shape::kDim, true, 143},
      {"attention", "view_as_real", Shape::kDim, true, 143},
      {"attention", "_to_copy", Shape::kDim, false, 144},
      {"attention", "view_as_complex", Shape::kKv, true, 145},
      {"attention", "mul", Shape::kKv, true, 146},
      {"attention", "_to_copy", Shape::kKv, false, 147},
      {"attention", "_scaled_dot_product_flash_attention", Shape::kHeads, false, 230},
      {"attention", "transpose", Shape::kDim, false, 231},
      {"attention.wo", "mm", Shape::kDim, false, 233},
      {"attention.wo", "_unsafe_view", Shape::kDim, false, 233},
      {"", "add", Shape::kDim, false, 402},
      {"ffn_norm", "_to_copy", Shape::kDim, true, 61},
      {"ffn_norm", "pow", Shape::kDim, true, 62},
      {"ffn_norm", "mean", Shape::kRow, true, 62},
      {"ffn_norm", "add", Shape::kRow, true, 62},
      {"ffn_norm", "rsqrt", Shape::kRow, true, 62},
      {"ffn_norm", "mul", Shape::kDim, true, 62},
      {"ffn_norm", "_to_copy", Shape::kDim, false, 63},
      {"ffn_norm", "mul", Shape::kDim, false, 64},
      {"feed_forward.w1", "mm", Shape::kHidden, false, 321},
      {"feed_forward", "silu", Shape::kHidden, false, 321},
      {"feed_forward.w3", "mm", Shape::kHidden, false, 321},
      {"feed_forward", "mul", Shape::kHidden, false, 321},
      {"feed_forward.w2", "mm", Shape::kDim, false, 321},
      {"", "add", Shape::kDim, false, 403},
  };
  return ops;
}

// Backward of one block: each forward op's gradient, in reverse, with two
// matmuls (input and weight gradients) per projection.
const std::vector<OpSpec>& BackwardOps() {
  static const std::vector<OpSpec> ops = [] {
    std::vector<OpSpec> out;
    const std::vector<OpSpec>& fwd = ForwardOps();
    for (auto it = fwd.rbegin(); it != fwd.rend(); ++it) {
      if (it->b_extra || it->b_missing) continue;
      const std::string_view op = it->op;
      if (op == "mm") {
        out.push_back({it->module, "mm", Shape::kDim, false, it->line});
        out.push_back({it->module, "mm", it->shape, true, it->line});
      } else if (op == "silu") {
        out.push_back({it->module, "silu_backward", it->shape, false, it->line});
      } else if (op == "_scaled_dot_product_flash_attention") {
        out.push_back({it->module, "_scaled_dot_product_flash_attention_backward", it->shape,
                       false, it->line});
      } else if (op == "mul" || op == "add" || op == "pow" || op == "rsqrt") {
        out.push_back({it->module, it->op, it->shape, it->f32, it->line});
      }
    }
    return out;
  }();
  return ops;
}

void AppendSci(double v, std::string* out) {
  char buf[32];
  int n = std::isnan(v) ? std::snprintf(buf, sizeof(buf), "nan")
                        : std::snprintf(buf, sizeof(buf), "%.6e", v);
  out->append(buf, n);
}

void AppendRepr(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("nan");
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // Python's repr: shortest round trip
  out->append(buf, r.ptr);
}

class DebugModeWriter {
 public:
  DebugModeWriter(const PairOptions& opt, const std::string& a, const std::string& b)
      : opt_(opt), a_(a), b_(b) {
    diverge_at_ = opt.diverge_at != kNoSeq ? opt.diverge_at : opt.kernels * 6 / 10;
    nan_at_ = diverge_at_ + (opt.kernels - std::min(diverge_at_, opt.kernels)) / 2;
  }

  absl::StatusOr<PairSummary> Run() {
    // The preamble states the count, so it is written once the count is known.
    for (uint64_t step = 0; a_ops_ < opt_.kernels; ++step) {
      counters_.clear();
      for (int layer = 0; layer < kLayers && a_ops_ < opt_.kernels; ++layer) {
        for (const OpSpec& op : ForwardOps()) Emit(step, layer, op, false);
      }
      for (int layer = kLayers - 1; layer >= 0 && a_ops_ < opt_.kernels; --layer) {
        for (const OpSpec& op : BackwardOps()) Emit(step, layer, op, true);
      }
    }
    PairSummary s = summary_;
    s.a_kernels = a_ops_;
    s.b_kernels = b_ops_;
    if (absl::Status st = Finish(a_, a_text_, a_ops_); !st.ok()) return st;
    if (absl::Status st = Finish(b_, b_text_, b_ops_); !st.ok()) return st;
    s.a_bytes = a_.bytes();
    s.b_bytes = b_.bytes();
    return s;
  }

 private:
  void Emit(uint64_t step, int layer, const OpSpec& op, bool backward) {
    if (a_ops_ >= opt_.kernels) return;
    const std::string module = op.module[0] ? absl::StrCat("layers.", layer, ".", op.module)
                                            : absl::StrCat("layers.", layer);
    // One op counter per module and pass through the step, forward then
    // backward, as DebugMode numbers them.
    const std::string& counter = module;
    const uint64_t key =
        Mix(opt_.seed, step, Mix(HashName(counter), counters_[counter + "#a"]));
    if (!op.b_extra) {
      WriteBlock(a_text_, module, counters_[counter + "#a"]++, op, backward, key, Perturbation{});
      ++a_ops_;
    }
    if (op.b_missing) {
      replaced_key_ = key;
      return;
    }
    if (!diverged_ && !op.b_extra && a_ops_ - 1 >= diverge_at_) {
      diverged_ = true;
      summary_.divergence_a_seq = a_ops_ - 1;
      summary_.divergence_b_seq = b_ops_;
    }
    Perturbation p;
    const uint64_t a_seq = a_ops_ == 0 ? 0 : a_ops_ - 1;
    if (diverged_) {
      p.rel = std::min(0.5, 1e-3 * (1.0 + static_cast<double>(a_seq - diverge_at_) / 500));
      p.hash_salt = 0xd1;
      if (opt_.plant_nan && a_seq >= nan_at_) {
        p.nan_fraction = 1e-4;
        if (summary_.nan_b_seq == kNoSeq) summary_.nan_b_seq = b_ops_;
      }
    } else if (std::string_view(op.op) == "mm" && (layer + step) % 7 == 0) {
      p.rel = 2e-6 * (0.05 + Rng(key).Uniform());  // split-K order differs
      p.hash_salt = 0x2a;
    }
    // An op B runs in place of the one it dropped just before computes the
    // same values (a `view` for an `_unsafe_view`).
    uint64_t b_key = key;
    if (op.b_extra) b_key = replaced_key_ != kNoSeq ? replaced_key_ : Mix(key, 0xb0b);
    replaced_key_ = kNoSeq;
    WriteBlock(b_text_, module, counters_[counter + "#b"]++, op, backward, b_key, p);
    ++b_ops_;
  }

  void WriteBlock(std::string& out, const std::string& module, uint64_t index, const OpSpec& op,
                  bool backward, uint64_t key, const Perturbation& p) {
    const uint64_t last = LastDim(op.shape);
    const uint64_t n = kTokens * last;
    const DType dt = op.f32 ? DType::kF32 : DType::kBF16;
    const std::string_view name = op.op;
    const bool nonneg = name == "pow" || name == "rsqrt" ||
                        (module.ends_with("_norm") && (name == "mean" || name == "add"));
    const BufferStats s = SynthStats(key, dt, n, {.nonneg = nonneg}, p);
    const bool nan = s.nan > 0;
    absl::StrAppend(&out, "[", module, "/op_", index, "_", op.op, "]\n",
                    "  Shape: torch.Size([8, 2048, ", last, "]), Dtype: torch.",
                    op.f32 ? "float32" : "bfloat16", "\n  L2 norm:  ");
    AppendSci(nan ? NAN : s.l2, &out);
    out.append("\n  Min:      ");
    AppendSci(nan ? NAN : s.min, &out);
    out.append("\n  Max:      ");
    AppendSci(nan ? NAN : s.max, &out);
    out.append("\n  Mean:     ");
    AppendSci(nan ? NAN : s.sum / static_cast<double>(n), &out);
    out.append("\n  Output hash: ");
    AppendRepr(nan ? NAN : s.l1, &out);
    out.append("\n  Input hashes: ");
    Perturbation in = p;
    in.nan_fraction = 0;
    for (int i = 0; i < (std::string_view(op.op) == "mm" ? 2 : 1); ++i) {
      if (i) out.append(", ");
      AppendRepr(SynthStats(Mix(key, i, 0x1a), dt, n, {}, in).l1, &out);
    }
    absl::StrAppend(&out, "\n  Location: torchtitan/models/llama3/model.py:", op.line, "\n");
    if (backward) out.append("  Phase: backward\n");
    out.push_back('\n');
  }

  absl::Status Finish(BufferedFile& file, const std::string& text, uint64_t ops) {
    absl::StrAppend(file.buffer(), "Total captured activations: ", ops,
                    "\nExcluded ops dispatched: detach, t, view, empty, zeros\n",
                    std::string(80, '='), "\n\n");
    file.buffer()->append(text);
    return file.Close();
  }

  const PairOptions& opt_;
  BufferedFile a_, b_;
  std::string a_text_, b_text_;  // ~34 MB per 100k ops: held until the count is known
  std::map<std::string, uint64_t> counters_;  // per-module op counters, per run
  uint64_t a_ops_ = 0, b_ops_ = 0, diverge_at_ = 0, nan_at_ = 0;
  bool diverged_ = false;
  uint64_t replaced_key_ = kNoSeq;  // values of the op B just dropped
  PairSummary summary_;
};

}  // namespace

absl::StatusOr<PairSummary> WriteDebugModePair(const PairOptions& options,
                                               const std::string& path_a,
                                               const std::string& path_b) {
  DebugModeWriter writer(options, path_a, path_b);
  return writer.Run();
}

}  // namespace numtrace::bench
