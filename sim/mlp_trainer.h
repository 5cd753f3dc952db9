// File: sim/mlp_trainer.h
//
// A small training loop played through the capture engine exactly as the
// CUPTI layer would present a real one: a 2-layer MLP (GEMM, fused bias+ReLU,
// bias add, softmax, NLL loss, backward, SGD through a multi-tensor-apply
// kernel), its "kernels" host functions over host buffers, launched with real
// parameter layouts (pointers inside structs too) and real-looking kernel
// names (ATen, cuBLAS, Triton). Step markers are all emitted (API mark, NVTX
// range, profiler start/stop), so every step-delimiting mode can be tested.
//
// Planted changes make two runs differ in known ways:
//   perturb_layer  scales that layer's forward GEMM output by (1 + 1e-3), as a
//                  wrong scale factor would: a real divergence at that kernel.
//   perturb_ulps   with perturb_layer: instead of scaling, moves only the
//                  elements kPerturbedElements of that output N units in the
//                  last place away from zero (bit pattern + N), a bug a
//                  statistic barely sees and the element view names exactly.
//   reorder_gemm   sums every GEMM in reverse k order: reduction-order noise.
//   nondeterministic  bias gradients as an atomics-based index_add kernel: rows
//                  summed in a random order, so two identical runs differ there.
//   flip_bit_step  silent data corruption: the SGD update of that step flips
//                  bit kFlippedBit of w1[kFlippedElement] after it ran.
//
// Data parallel (dp > 1, rank data_shard): each rank reads its own batches
// (shard 0's are the single-process run's); after the backward pass NCCL's
// ring all-reduce (kernel ncclKernel_AllReduce_RING_LL_Sum_float, one launch
// per gradient, op c10d::allreduce_) makes every gradient the mean over the
// ranks, so from there on - the all-reduce's and the SGD update's bytes -
// every replica must agree. The other ranks' gradients are recomputed here
// (no network): a step costs dp times a single rank's.
//
// Provenance: every launch is announced (shim/engine/provenance.h) the way
// the PyTorch hooks announce the kernels of the equivalent module tree
//   class Mlp(nn.Module):            # scope ""   (the root)
//     fc1 = Linear(32, 64)           # "fc1": aten::mm, then the fused Triton
//                                    #   bias+ReLU (op "aten::add+aten::relu")
//     act = ReLU()                   # "act" is fused into fc1's Triton kernel;
//                                    #   its backward is stamped fc1 as well
//     fc2 = Linear(64, 10)           # "fc2": aten::mm, aten::add
//     loss = CrossEntropyLoss()      # "loss": aten::_softmax, aten::nll_loss_forward
// with phase forward (the loss zeroing is the root's aten::zero_), backward
// (the modules in reverse: loss, fc2, fc1; aten::mm, aten::sum,
// aten::threshold_backward) and optimizer (the root's aten::_foreach_add_).
// perturb_layer 1 is a change in fc1, 2 in fc2.
//
// Example:
//   MlpOptions o; o.steps = 3; o.perturb_layer = 2;
//   MlpResult r = TrainMlp(o, &engine);   // r.losses[i] per step
#ifndef NUMTRACE_SIM_MLP_TRAINER_H_
#define NUMTRACE_SIM_MLP_TRAINER_H_

#include <cstdint>
#include <vector>

#include "shim/engine/event_sink.h"
#include "sim/sim_memory.h"

namespace numtrace::sim {

struct MlpOptions {
  int steps = 4;
  int batch = 64, inputs = 32, hidden = 64, classes = 10;
  uint64_t seed = 1234;
  float lr = 0.1f;
  int perturb_layer = 0;    // 0 = none, 1 or 2
  int perturb_step = -1;    // -1 = every step
  int perturb_ulps = 0;     // 0: scale the whole output; N > 0: N ULPs at kPerturbedElements
  bool reorder_gemm = false;
  bool nondeterministic = false;  // bias gradients summed in a random row order per launch
  int dp = 1;               // data-parallel ranks (1: none)
  int data_shard = 0;       // this rank: which shard of the data it reads
  int flip_bit_step = -1;   // the SGD update flips one weight bit at this step (-1: never)
  int nan_at_step = -1;     // the bias add leaves a NaN in logits[0] at this step (-1: never)
  int profile_step = -1;    // cuProfilerStart/Stop around this step (-1: none)
  int64_t kill_after_launches = -1;  // SIGKILL the process after this many launches
  // > 0: a run resumed from a checkpoint saved after this many steps: steps
  // 0..resume_at-1 run unseen (the run that saved it), then steps resume_at..
  // steps-1 are played with numbered step marks (numtrace_mark_step_to, as
  // the hooks send an optimizer's step count), bitwise as the whole run's.
  int resume_at = 0;
  SimMemory::Layout memory = SimMemory::Layout::kTensors;  // --memory (sim_memory.h)
};

struct MlpResult {
  std::vector<float> losses;    // one per step
  std::vector<float> weights;   // final W1, b1, W2, b2 concatenated
};

// The Triton kernel's per-argument dtypes, announced like the PyTorch hooks do.
inline constexpr const char* kTritonBiasReluName = "triton_poi_fused_addmm_relu_0";
inline constexpr const char* kTritonBiasReluDTypes = "f32,f32,raw";

MlpResult TrainMlp(const MlpOptions& options, shim::EventSink* sink);

// The flat indices perturb_ulps moves (inside both layers' outputs).
inline constexpr int kPerturbedElements[] = {5, 17, 300};

// Module paths (scopes) of the two layers and the loss, for tests.
inline constexpr const char* kModuleFc1 = "fc1";
inline constexpr const char* kModuleFc2 = "fc2";
inline constexpr const char* kModuleLoss = "loss";

// The bit --flip-bit flips: a low mantissa bit of one first-layer weight,
// a change no loss curve shows.
inline constexpr int kFlippedElement = 123;
inline constexpr int kFlippedBit = 7;
inline constexpr const char* kSgdKernelName =
    "_ZN2at6native25multi_tensor_apply_kernelILi2ENS0_18TensorListMetadataIfLi2EEENS0_10SGDFunctorIfEEEEvT0_T1_f";

// Names of the forward GEMM of each layer, for tests that look for them.
inline constexpr const char* kForwardGemmName = "ampere_sgemm_64x32_sliced1x4_nn";

}  // namespace numtrace::sim

#endif  // NUMTRACE_SIM_MLP_TRAINER_H_
