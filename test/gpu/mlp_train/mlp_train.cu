// File: test/gpu/mlp_train/mlp_train.cu
//
// A small, self-contained CUDA training loop for the GPU checks: a 3-layer
// MLP (own GEMM kernels, bias + ReLU, softmax cross-entropy, backward, SGD)
// on synthetic data. Deterministic by default: two runs print the same
// losses and write the same final weights, bit for bit. Options:
//   --steps N           training steps (default 4)
//   --perturb L         add 1e-3 to layer L's forward output (every step)
//   --nondeterministic  weight gradients reduced with atomicAdd (order varies)
//   --out FILE          final weights (raw float32, layer by layer)
// Each layer's kernels are template instances on the layer index, so a trace
// names the layer (e.g. linear_forward<1>). Step ends call
// numtrace_mark_step() when libnumtrace.so is loaded. Losses go to stdout;
// step times (ms) go to stderr so stdout stays comparable across runs.
//
// Example:
//   mlp_train --steps 4 --out w.bin            # prints "step 0 loss 2.30..."
//   LD_PRELOAD=libnumtrace.so mlp_train --perturb 1
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kBatch = 256;
constexpr int kDims[4] = {64, 128, 128, 10};  // input, hidden, hidden, classes
constexpr int kLayers = 3;
constexpr float kLearningRate = 0.05f;

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "mlp_train: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(3);                                                                \
    }                                                                              \
  } while (0)

// y[b][j] = act(sum_k x[b][k] * w[k][j] + bias[j]) + perturb
template <int L>
__global__ void linear_forward(const float* x, const float* w, const float* bias, float* y,
                               int batch, int in, int out, int relu, float perturb) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch * out) return;
  int b = i / out, j = i % out;
  float s = bias[j];
  for (int k = 0; k < in; ++k) s = __fadd_rn(s, __fmul_rn(x[b * in + k], w[k * out + j]));
  if (relu && s < 0.f) s = 0.f;
  y[i] = s + perturb;
}

// Per-sample softmax cross-entropy; dlogits = (softmax - onehot) / batch.
__global__ void softmax_xent(const float* logits, const int* labels, float* loss, float* dlogits,
                             int batch, int classes) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const float* z = logits + b * classes;
  float m = z[0];
  for (int c = 1; c < classes; ++c) m = fmaxf(m, z[c]);
  float sum = 0.f;
  for (int c = 0; c < classes; ++c) sum += expf(z[c] - m);
  loss[b] = logf(sum) + m - z[labels[b]];
  for (int c = 0; c < classes; ++c) {
    float p = expf(z[c] - m) / sum;
    dlogits[b * classes + c] = (p - (c == labels[b] ? 1.f : 0.f)) / batch;
  }
}

// dx[b][k] = sum_j dy[b][j] * w[k][j], masked by the ReLU of x (x > 0).
template <int L>
__global__ void linear_backward_input(const float* dy, const float* w, const float* x, float* dx,
                                      int batch, int in, int out, int relu_mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch * in) return;
  int b = i / in, k = i % in;
  float s = 0.f;
  for (int j = 0; j < out; ++j) s = __fadd_rn(s, __fmul_rn(dy[b * out + j], w[k * out + j]));
  dx[i] = (relu_mask && x[i] <= 0.f) ? 0.f : s;
}

// Deterministic: one thread per weight, batch summed in order.
template <int L>
__global__ void weight_grad(const float* x, const float* dy, float* dw, float* db, int batch,
                            int in, int out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= in * out) return;
  int k = i / out, j = i % out;
  float s = 0.f;
  for (int b = 0; b < batch; ++b) s = __fadd_rn(s, __fmul_rn(x[b * in + k], dy[b * out + j]));
  dw[i] = s;
  if (k == 0) {
    float t = 0.f;
    for (int b = 0; b < batch; ++b) t += dy[b * out + j];
    db[j] = t;
  }
}

// Nondeterministic: one thread per (sample, weight) adds into dw with
// atomicAdd, so the summation order depends on scheduling.
template <int L>
__global__ void weight_grad_atomic(const float* x, const float* dy, float* dw, float* db,
                                   int batch, int in, int out) {
  long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long>(batch) * in * out) return;
  int b = i / (in * out);
  int r = i % (in * out);
  int k = r / out, j = r % out;
  atomicAdd(&dw[r], x[b * in + k] * dy[b * out + j]);
  if (k == 0) atomicAdd(&db[j], dy[b * out + j]);
}

__global__ void sgd_update(float* w, const float* dw, int n, float lr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = __fsub_rn(w[i], __fmul_rn(lr, dw[i]));
}

__global__ void fill_zero(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 0.f;
}

int Blocks(long n) { return static_cast<int>((n + 255) / 256); }

// Deterministic pseudo-random numbers (host side; no curand dependency).
struct Lcg {
  uint64_t s;
  float Next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 40) & 0xffffff) / 16777216.f - 0.5f;
  }
};

template <int L>
void Forward(const float* x, float* const* w, float* const* b, float* y, bool relu, float perturb) {
  linear_forward<L><<<Blocks(kBatch * kDims[L + 1]), 256>>>(x, w[L], b[L], y, kBatch, kDims[L],
                                                            kDims[L + 1], relu, perturb);
}

template <int L>
void Backward(float* const* acts, float* const* grads, float* const* w, float* const* dw,
              float* const* db, bool atomics) {
  int in = kDims[L], out = kDims[L + 1];
  if (atomics) {
    fill_zero<<<Blocks(in * out), 256>>>(dw[L], in * out);
    fill_zero<<<Blocks(out), 256>>>(db[L], out);
    weight_grad_atomic<L><<<Blocks(static_cast<long>(kBatch) * in * out), 256>>>(
        acts[L], grads[L + 1], dw[L], db[L], kBatch, in, out);
  } else {
    weight_grad<L><<<Blocks(in * out), 256>>>(acts[L], grads[L + 1], dw[L], db[L], kBatch, in, out);
  }
  if (L > 0) {
    linear_backward_input<L><<<Blocks(kBatch * in), 256>>>(grads[L + 1], w[L], acts[L], grads[L],
                                                           kBatch, in, out, 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 4, perturb_layer = -1;
  bool atomics = false;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (a == "--perturb" && i + 1 < argc) perturb_layer = std::atoi(argv[++i]);
    else if (a == "--nondeterministic") atomics = true;
    else if (a == "--out" && i + 1 < argc) out_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: mlp_train [--steps N] [--perturb L] [--nondeterministic] [--out FILE]\n");
      return 2;
    }
  }
  using MarkFn = int (*)();
  auto mark_step = reinterpret_cast<MarkFn>(dlsym(RTLD_DEFAULT, "numtrace_mark_step"));

  Lcg rng{42};
  std::vector<float> hx(kBatch * kDims[0]);
  std::vector<int> hy(kBatch);
  for (float& v : hx) v = rng.Next() * 2.f;
  for (int b = 0; b < kBatch; ++b) hy[b] = b % kDims[3];

  float *w[kLayers], *bias[kLayers], *dw[kLayers], *db[kLayers];
  float* acts[kLayers + 1];
  float* grads[kLayers + 1];
  for (int l = 0; l < kLayers; ++l) {
    int n = kDims[l] * kDims[l + 1];
    std::vector<float> hw(n), hb(kDims[l + 1], 0.f);
    float scale = std::sqrt(2.f / kDims[l]) * 2.f;
    for (float& v : hw) v = rng.Next() * scale;
    CHECK(cudaMalloc(&w[l], n * sizeof(float)));
    CHECK(cudaMalloc(&dw[l], n * sizeof(float)));
    CHECK(cudaMalloc(&bias[l], kDims[l + 1] * sizeof(float)));
    CHECK(cudaMalloc(&db[l], kDims[l + 1] * sizeof(float)));
    CHECK(cudaMemcpy(w[l], hw.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(bias[l], hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  for (int l = 0; l <= kLayers; ++l) {
    CHECK(cudaMalloc(&acts[l], kBatch * kDims[l] * sizeof(float)));
    CHECK(cudaMalloc(&grads[l], kBatch * kDims[l] * sizeof(float)));
  }
  int* labels;
  float* loss;
  CHECK(cudaMalloc(&labels, kBatch * sizeof(int)));
  CHECK(cudaMalloc(&loss, kBatch * sizeof(float)));
  CHECK(cudaMemcpy(acts[0], hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(labels, hy.data(), hy.size() * sizeof(int), cudaMemcpyHostToDevice));

  auto p = [&](int l) { return l == perturb_layer ? 1e-3f : 0.f; };
  std::vector<float> hloss(kBatch);
  for (int step = 0; step < steps; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    Forward<0>(acts[0], w, bias, acts[1], true, p(0));
    Forward<1>(acts[1], w, bias, acts[2], true, p(1));
    Forward<2>(acts[2], w, bias, acts[3], false, p(2));
    softmax_xent<<<Blocks(kBatch), 256>>>(acts[3], labels, loss, grads[3], kBatch, kDims[3]);
    Backward<2>(acts, grads, w, dw, db, atomics);
    Backward<1>(acts, grads, w, dw, db, atomics);
    Backward<0>(acts, grads, w, dw, db, atomics);
    for (int l = 0; l < kLayers; ++l) {
      int n = kDims[l] * kDims[l + 1];
      sgd_update<<<Blocks(n), 256>>>(w[l], dw[l], n, kLearningRate);
      sgd_update<<<Blocks(kDims[l + 1]), 256>>>(bias[l], db[l], kDims[l + 1], kLearningRate);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hloss.data(), loss, kBatch * sizeof(float), cudaMemcpyDeviceToHost));
    double total = 0;
    for (float v : hloss) total += v;  // host sum in a fixed order
    std::printf("step %d loss %.9g\n", step, total / kBatch);
    std::fflush(stdout);
    if (mark_step != nullptr) mark_step();
    CHECK(cudaDeviceSynchronize());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "mlp_train: step %d time_ms %.3f\n", step, ms);
  }
  if (!out_path.empty()) {
    FILE* f = std::fopen(out_path.c_str(), "wb");
    if (f == nullptr) {
      std::fprintf(stderr, "mlp_train: cannot write %s\n", out_path.c_str());
      return 3;
    }
    for (int l = 0; l < kLayers; ++l) {
      int n = kDims[l] * kDims[l + 1];
      std::vector<float> hw(n);
      CHECK(cudaMemcpy(hw.data(), w[l], n * sizeof(float), cudaMemcpyDeviceToHost));
      std::fwrite(hw.data(), sizeof(float), n, f);
    }
    std::fclose(f);
  }
  return 0;
}
