#include "sim/mlp_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "shim/engine/provenance.h"
#include "shim/engine/null_sink.h"
#include "sim/sim_launcher.h"
#include "sim/sim_memory.h"

namespace numtrace::sim {
namespace {

// Kernel symbols as the driver reports them (mangled where CUDA C++ mangles).
constexpr const char* kFillName =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_";
constexpr const char* kAddName =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_";
constexpr const char* kSoftmaxName = "_ZN2at6native19cunn_SoftMaxForwardIfffEEvPT1_PKT_i";
constexpr const char* kNllName =
    "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_biii";
constexpr const char* kXentBackwardName =
    "_ZN2at6native28softmax_xent_backward_kernelIfEEvPKT_PKlPS2_ii";
constexpr const char* kReduceRowsName = "_ZN2at6native22reduce_sum_rows_kernelIfEEvPKT_PS2_ii";
// The bias gradient as index_add_ with atomics computes it (--nondeterministic).
constexpr const char* kIndexAddName =
    "void at::native::indexFuncSmallIndex<float, long, unsigned int, 1, 1, -2, true>(at::cuda::"
    "detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned int>, "
    "at::cuda::detail::TensorInfo<long, unsigned int>, int, int, unsigned int, long, float)";
constexpr const char* kThresholdBackwardName =
    "_ZN2at6native25threshold_backward_kernelIfEEviNS_6detail5ArrayIPcLi3EEE";
constexpr const char* kSgdName = kSgdKernelName;
constexpr const char* kGemmTnName = "ampere_sgemm_64x32_sliced1x4_tn";
constexpr const char* kGemmNtName = "ampere_sgemm_64x32_sliced1x4_nt";
// NCCL's ring all-reduce of float gradients, as PyTorch 2.x profiles name it
// (test/data/kernel-names/5_nccl_kernels.txt).
constexpr const char* kAllReduceName = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";

// at::detail::Array<char*, N>: pointers inside a by-value struct parameter.
template <int N>
struct PtrArray {
  char* data[N];
};
struct FillFunctor { float value; };
struct AddFunctor { float alpha; };
// A cuBLAS-style parameter block: the pointers sit inside one struct.
struct GemmParams {
  const float* a;
  const float* b;
  float* c;
  int m, n, k;
  int lda, ldb, ldc;
  float alpha, beta;
};
// TensorListMetadata<2> as multi_tensor_apply passes it: parameter and
// gradient addresses, then element counts.
struct TensorListMetadata {
  void* addresses[2][8];
  int64_t numel[8];
  int count;
};
struct SgdFunctor { float weight_decay; };

// What the PyTorch hooks announce around a launch (module forward/backward
// hooks push the scope, the dispatch mode the op, autograd and the optimizer
// hooks decide the phase), for the module tree documented in mlp_trainer.h.
class Announce {
 public:
  Announce(const char* scope, const char* op, Phase phase) {
    shim::provenance::PushScope(scope);
    shim::provenance::PushOp(op);
    shim::provenance::SetPhase(phase);
  }
  ~Announce() {
    shim::provenance::PopOp();
    shim::provenance::PopScope();
    shim::provenance::SetPhase(Phase::kNone);
  }
  Announce(const Announce&) = delete;
  Announce& operator=(const Announce&) = delete;
};
constexpr Phase kFwd = Phase::kForward, kBwd = Phase::kBackward;

struct Tensors {
  float *x, *w1, *b1, *h, *w2, *b2, *logits, *probs, *loss, *total_weight;
  int64_t* target;
  float *dlogits, *dw2, *db2, *dh, *dw1, *db1;
};

class Mlp {
 public:
  Mlp(const MlpOptions& o, shim::EventSink* sink) : o_(o), sink_(sink), mem_(sink, o.memory), launch_(sink, 7, o.kill_after_launches) {
    const int B = o.batch, D = o.inputs, H = o.hidden, C = o.classes;
    t_.x = mem_.Alloc<float>(B * D);
    t_.target = mem_.Alloc<int64_t>(B);
    t_.w1 = mem_.Alloc<float>(D * H);
    t_.b1 = mem_.Alloc<float>(H);
    t_.h = mem_.Alloc<float>(B * H);
    t_.w2 = mem_.Alloc<float>(H * C);
    t_.b2 = mem_.Alloc<float>(C);
    t_.logits = mem_.Alloc<float>(B * C);
    t_.probs = mem_.Alloc<float>(B * C);
    t_.loss = mem_.Alloc<float>(1);
    t_.total_weight = mem_.Alloc<float>(1);
    t_.dlogits = mem_.Alloc<float>(B * C);
    t_.dw2 = mem_.Alloc<float>(H * C);
    t_.db2 = mem_.Alloc<float>(C);
    t_.dh = mem_.Alloc<float>(B * H);
    t_.dw1 = mem_.Alloc<float>(D * H);
    t_.db1 = mem_.Alloc<float>(H);
    std::mt19937_64 rng(o.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int i = 0; i < D * H; ++i) t_.w1[i] = normal(rng) / std::sqrt(float(D));
    for (int i = 0; i < H * C; ++i) t_.w2[i] = normal(rng) / std::sqrt(float(H));
  }

  void LoadWeights(const Mlp& from) {
    const int D = o_.inputs, H = o_.hidden, C = o_.classes;
    std::copy(from.t_.w1, from.t_.w1 + D * H, t_.w1);
    std::copy(from.t_.b1, from.t_.b1 + H, t_.b1);
    std::copy(from.t_.w2, from.t_.w2 + H * C, t_.w2);
    std::copy(from.t_.b2, from.t_.b2 + C, t_.b2);
  }

  MlpResult Train() {
    MlpResult r;
    for (int step = o_.resume_at; step < o_.steps; ++step) {
      if (step == o_.profile_step) sink_->OnProfilerStart();
      const std::string range = "train_step";
      sink_->OnRangePush(range);
      LoadBatch(step);  // a host-to-device copy: not a kernel launch
      r.losses.push_back(Step(step));
      sink_->OnRangePop();
      // What the optimizer.step() hook does; a resumed run's steps say their
      // number, as the hooks send an optimizer's step count.
      if (o_.resume_at > 0) {
        sink_->OnStepMarkTo(step + 1);
      } else {
        sink_->OnStepMark();
      }
      if (step == o_.profile_step) sink_->OnProfilerStop();
    }
    const int D = o_.inputs, H = o_.hidden, C = o_.classes;
    r.weights.insert(r.weights.end(), t_.w1, t_.w1 + D * H);
    r.weights.insert(r.weights.end(), t_.b1, t_.b1 + H);
    r.weights.insert(r.weights.end(), t_.w2, t_.w2 + H * C);
    r.weights.insert(r.weights.end(), t_.b2, t_.b2 + C);
    return r;
  }

 private:
  void LoadBatch(int step) {
    // Each data-parallel rank reads its own shard; shard 0 is the
    // single-process run's data, so --dp leaves rank 0's batches as they were.
    std::mt19937_64 rng(o_.seed * 7919 + step + uint64_t(o_.data_shard) * 1000003);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int i = 0; i < o_.batch * o_.inputs; ++i) t_.x[i] = u(rng);
    for (int b = 0; b < o_.batch; ++b) t_.target[b] = static_cast<int64_t>(rng() % o_.classes);
  }

  // C[m,n] = sum_k op(A)[m,k] * op(B)[k,n]; ta/tb: A or B stored transposed.
  void Gemm(const char* name, const float* a, const float* b, float* c, int m, int n, int k,
            bool ta, bool tb, bool perturb) {
    GemmParams p{a, b, c, m, n, k, ta ? m : k, tb ? k : n, n, 1.0f, 0.0f};
    launch_.Kernel(name, {uint32_t((m * n + 255) / 256), 1, 1}, {256, 1, 1}).Param(p).Run([&] {
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          float acc = 0.0f;
          for (int kk0 = 0; kk0 < k; ++kk0) {
            int kk = o_.reorder_gemm ? k - 1 - kk0 : kk0;
            float av = ta ? a[kk * m + i] : a[i * k + kk];
            float bv = tb ? b[j * k + kk] : b[kk * n + j];
            acc += av * bv;
          }
          c[i * n + j] = acc;
        }
      }
      if (perturb && o_.perturb_ulps > 0) {
        for (int i : kPerturbedElements) {
          uint32_t bits;
          std::memcpy(&bits, &c[i], 4);
          bits += static_cast<uint32_t>(o_.perturb_ulps);  // magnitude up, sign kept
          std::memcpy(&c[i], &bits, 4);
        }
      } else if (perturb) {
        for (int i = 0; i < m * n; ++i) c[i] *= 1.001f;
      }
    });
  }

  // out[j] = sum_i in[i, j]. Nondeterministic mode adds the rows in an order
  // drawn per launch from std::random_device, as atomicAdd-based kernels do
  // on a GPU: the float sum's last bits change from run to run.
  void ReduceRows(const float* in, float* out, int rows, int cols) {
    std::vector<int> order(rows);
    for (int i = 0; i < rows; ++i) order[i] = i;
    if (o_.nondeterministic) {
      std::mt19937 rng(std::random_device{}());
      std::shuffle(order.begin(), order.end(), rng);
    }
    launch_.Kernel(o_.nondeterministic ? kIndexAddName : kReduceRowsName, {uint32_t(cols), 1, 1}, {128, 1, 1})
        .Param(in).Param(out).Param(rows).Param(cols)
        .Run([&] {
          for (int j = 0; j < cols; ++j) {
            float s = 0.0f;
            for (int i : order) s += in[i * cols + j];
            out[j] = s;
          }
        });
  }

  float Step(int step) {
    const float loss = ForwardBackward(step);
    if (o_.dp > 1) AllReduce(step);
    Sgd(step);
    return loss;
  }

  // The gradient all-reduce of data-parallel training (DDP's bucket hook,
  // NCCL's ring): each gradient becomes the mean over the ranks, summed in
  // rank order, so every rank holds the same bytes afterwards. There is no
  // network here: the other ranks' gradients are recomputed on this
  // process from the same weights and their data shards by peer replicas
  // whose launches nobody sees - what the ring would have delivered.
  void AllReduce(int step) {
    if (peers_.empty()) {
      for (int q = 0; q < o_.dp; ++q) {
        if (q == o_.data_shard) {
          peers_.emplace_back();
          continue;
        }
        MlpOptions p = o_;
        p.dp = 1;
        p.data_shard = q;
        p.flip_bit_step = p.nan_at_step = p.profile_step = -1;
        p.kill_after_launches = -1;
        p.memory = SimMemory::Layout::kTensors;
        peers_.push_back(std::make_unique<Mlp>(p, &null_sink_));
      }
    }
    const int D = o_.inputs, H = o_.hidden, C = o_.classes;
    for (int q = 0; q < o_.dp; ++q) {
      if (!peers_[q]) continue;
      Tensors& pt = peers_[q]->t_;
      std::copy(t_.w1, t_.w1 + D * H, pt.w1);
      std::copy(t_.b1, t_.b1 + H, pt.b1);
      std::copy(t_.w2, t_.w2 + H * C, pt.w2);
      std::copy(t_.b2, t_.b2 + C, pt.b2);
      peers_[q]->LoadBatch(step);
      peers_[q]->ForwardBackward(step);
    }
    float* grads[4] = {t_.dw1, t_.db1, t_.dw2, t_.db2};
    const int64_t sizes[4] = {D * H, H, H * C, C};
    Announce at("", "c10d::allreduce_", kBwd);
    for (int i = 0; i < 4; ++i) {
      launch_.Kernel(kAllReduceName, {uint32_t(o_.dp), 1, 1}, {256, 1, 1})
          .Param(grads[i]).Param(sizes[i])
          .Run([&] {
            std::vector<float> sum(sizes[i], 0.0f);
            for (int q = 0; q < o_.dp; ++q) {
              const Tensors& src = peers_[q] ? peers_[q]->t_ : t_;
              const float* g[4] = {src.dw1, src.db1, src.dw2, src.db2};
              for (int64_t j = 0; j < sizes[i]; ++j) sum[j] += g[i][j];
            }
            for (int64_t j = 0; j < sizes[i]; ++j) grads[i][j] = sum[j] / float(o_.dp);
          });
    }
  }

  float ForwardBackward(int step) {
    const int B = o_.batch, D = o_.inputs, H = o_.hidden, C = o_.classes;
    auto perturb = [&](int layer) {
      return o_.perturb_layer == layer && (o_.perturb_step < 0 || o_.perturb_step == step);
    };
    // Zero the loss accumulator (a fill kernel, as zero_() launches).
    std::optional<Announce> at;
    at.emplace("", "aten::zero_", kFwd);
    launch_.Kernel(kFillName, {1, 1, 1}, {64, 1, 1})
        .Param(1).Param(FillFunctor{0.0f}).Param(PtrArray<1>{{reinterpret_cast<char*>(t_.loss)}})
        .Run([&] { t_.loss[0] = 0.0f; });
    // Layer 1: h = relu(x @ w1 + b1); the bias+ReLU is a Triton kernel.
    at.reset(); at.emplace(kModuleFc1, "aten::mm", kFwd);
    Gemm(kForwardGemmName, t_.x, t_.w1, t_.h, B, H, D, false, false, perturb(1));
    // A compiled kernel: the operators Inductor fused, '+'-joined.
    at.reset(); at.emplace(kModuleFc1, "aten::add+aten::relu", kFwd);
    launch_.Kernel(kTritonBiasReluName, {uint32_t((B * H + 127) / 128), 1, 1}, {128, 1, 1})
        .Param(t_.h).Param(t_.b1).Param(B * H)
        .Run([&] {
          for (int i = 0; i < B * H; ++i) t_.h[i] = std::max(0.0f, t_.h[i] + t_.b1[i % H]);
        });
    // Layer 2: logits = h @ w2 + b2.
    at.reset(); at.emplace(kModuleFc2, "aten::mm", kFwd);
    Gemm(kForwardGemmName, t_.h, t_.w2, t_.logits, B, C, H, false, false, perturb(2));
    at.reset(); at.emplace(kModuleFc2, "aten::add", kFwd);
    launch_.Kernel(kAddName, {uint32_t((B * C + 127) / 128), 1, 1}, {128, 1, 1})
        .Param(B * C).Param(AddFunctor{1.0f})
        .Param(PtrArray<3>{{reinterpret_cast<char*>(t_.logits), reinterpret_cast<char*>(t_.logits),
                            reinterpret_cast<char*>(t_.b2)}})
        .Run([&] {
          for (int i = 0; i < B * C; ++i) t_.logits[i] += t_.b2[i % C];
          if (step == o_.nan_at_step) t_.logits[0] = std::numeric_limits<float>::quiet_NaN();
        });
    // Softmax and NLL loss.
    at.reset(); at.emplace(kModuleLoss, "aten::_softmax", kFwd);
    launch_.Kernel(kSoftmaxName, {uint32_t(B), 1, 1}, {128, 1, 1})
        .Param(t_.probs).Param(static_cast<const float*>(t_.logits)).Param(C)
        .Run([&] {
          for (int b = 0; b < B; ++b) {
            float mx = t_.logits[b * C];
            for (int c = 1; c < C; ++c) mx = std::max(mx, t_.logits[b * C + c]);
            float s = 0.0f;
            for (int c = 0; c < C; ++c) s += std::exp(t_.logits[b * C + c] - mx);
            for (int c = 0; c < C; ++c) t_.probs[b * C + c] = std::exp(t_.logits[b * C + c] - mx) / s;
          }
        });
    at.reset(); at.emplace(kModuleLoss, "aten::nll_loss_forward", kFwd);
    launch_.Kernel(kNllName, {1, 1, 1}, {32, 1, 1})
        .Param(t_.loss).Param(t_.total_weight).Param(static_cast<const float*>(t_.probs))
        .Param(static_cast<const int64_t*>(t_.target)).Param(static_cast<const float*>(nullptr))
        .Param(true).Param(B).Param(2).Param(C)
        .Run([&] {
          float s = 0.0f;
          for (int b = 0; b < B; ++b) s -= std::log(t_.probs[b * C + t_.target[b]]);
          t_.loss[0] = s / float(B);
          t_.total_weight[0] = float(B);
        });
    // Backward: the modules in reverse, as autograd reaches them.
    at.reset(); at.emplace(kModuleLoss, "aten::nll_loss_backward+aten::_softmax_backward_data", kBwd);
    launch_.Kernel(kXentBackwardName, {uint32_t(B), 1, 1}, {128, 1, 1})
        .Param(static_cast<const float*>(t_.probs)).Param(static_cast<const int64_t*>(t_.target))
        .Param(t_.dlogits).Param(B).Param(C)
        .Run([&] {
          for (int b = 0; b < B; ++b) {
            for (int c = 0; c < C; ++c) {
              float g = t_.probs[b * C + c] - (c == t_.target[b] ? 1.0f : 0.0f);
              t_.dlogits[b * C + c] = g / float(B);
            }
          }
        });
    at.reset(); at.emplace(kModuleFc2, "aten::mm", kBwd);
    Gemm(kGemmTnName, t_.h, t_.dlogits, t_.dw2, H, C, B, true, false, false);
    at.reset(); at.emplace(kModuleFc2, "aten::sum", kBwd);
    ReduceRows(t_.dlogits, t_.db2, B, C);
    at.reset(); at.emplace(kModuleFc2, "aten::mm", kBwd);
    Gemm(kGemmNtName, t_.dlogits, t_.w2, t_.dh, B, H, C, false, true, false);
    at.reset(); at.emplace(kModuleFc1, "aten::threshold_backward", kBwd);
    launch_.Kernel(kThresholdBackwardName, {uint32_t((B * H + 127) / 128), 1, 1}, {128, 1, 1})
        .Param(B * H)
        .Param(PtrArray<3>{{reinterpret_cast<char*>(t_.dh), reinterpret_cast<char*>(t_.dh),
                            reinterpret_cast<char*>(t_.h)}})
        .Run([&] {
          for (int i = 0; i < B * H; ++i) t_.dh[i] = t_.h[i] > 0.0f ? t_.dh[i] : 0.0f;
        });
    at.reset(); at.emplace(kModuleFc1, "aten::mm", kBwd);
    Gemm(kGemmTnName, t_.x, t_.dh, t_.dw1, D, H, B, true, false, false);
    at.reset(); at.emplace(kModuleFc1, "aten::sum", kBwd);
    ReduceRows(t_.dh, t_.db1, B, H);
    at.reset();
    return t_.loss[0];
  }

  void Sgd(int step) {
    const int D = o_.inputs, H = o_.hidden, C = o_.classes;
    std::optional<Announce> at;
    // The optimizer updates the root module's parameters.
    at.reset(); at.emplace("", "aten::_foreach_add_", Phase::kOptimizer);
    // SGD over all four parameters in one multi-tensor-apply launch.
    TensorListMetadata meta{};
    float* params[4] = {t_.w1, t_.b1, t_.w2, t_.b2};
    float* grads[4] = {t_.dw1, t_.db1, t_.dw2, t_.db2};
    int64_t sizes[4] = {D * H, H, H * C, C};
    for (int i = 0; i < 4; ++i) {
      meta.addresses[0][i] = params[i];
      meta.addresses[1][i] = grads[i];
      meta.numel[i] = sizes[i];
    }
    meta.count = 4;
    launch_.Kernel(kSgdName, {4, 1, 1}, {512, 1, 1})
        .Param(meta).Param(SgdFunctor{0.0f}).Param(o_.lr)
        .Run([&] {
          for (int i = 0; i < 4; ++i) {
            for (int64_t j = 0; j < sizes[i]; ++j) params[i][j] -= o_.lr * grads[i][j];
          }
          // Silent data corruption: one bit of the updated weights flips.
          if (step == o_.flip_bit_step) {
            uint32_t bits;
            std::memcpy(&bits, &t_.w1[kFlippedElement], 4);
            bits ^= 1u << kFlippedBit;
            std::memcpy(&t_.w1[kFlippedElement], &bits, 4);
          }
        });
    at.reset();
  }

  MlpOptions o_;
  shim::EventSink* sink_;
  SimMemory mem_;
  SimLauncher launch_;
  Tensors t_{};
  // --dp: the other ranks' replicas (null at this rank's own index).
  shim::NullSink null_sink_;
  std::vector<std::unique_ptr<Mlp>> peers_;
};

}  // namespace

MlpResult TrainMlp(const MlpOptions& options, shim::EventSink* sink) {
  Mlp mlp(options, sink);
  if (options.resume_at > 0) {
    // The checkpoint: the weights of the same loop after resume_at steps,
    // trained where no capture sees it (SGD keeps no other state).
    MlpOptions saved = options;
    saved.steps = options.resume_at;
    saved.resume_at = 0;
    saved.profile_step = -1;
    saved.kill_after_launches = -1;
    shim::NullSink unseen;
    Mlp before(saved, &unseen);
    before.Train();
    mlp.LoadWeights(before);
  }
  return mlp.Train();
}

}  // namespace numtrace::sim
