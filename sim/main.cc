// numtrace-sim: the simulated training loop as a program. Captures like a
// job with libnumtrace.so preloaded (NUMTRACE_* settings from the
// environment), on the host reference device instead of a GPU. The demo runs
// it twice (reference and planted change) and diffs the two traces.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "common/version/version.h"
#include "sim/sim_run.h"

int main(int argc, char** argv) {
  numtrace::sim::MlpOptions o;
  CLI::App app{"numtrace-sim: a 2-layer MLP training loop captured on the host reference device"};
  app.add_option("--steps", o.steps, "training steps")->check(CLI::Range(1, 1000));
  app.add_option("--seed", o.seed, "data and weight seed");
  app.add_option("--perturb", o.perturb_layer, "scale layer N's forward GEMM output by 1.001")
      ->check(CLI::Range(0, 2));
  app.add_option("--perturb-ulps", o.perturb_ulps,
                 "with --perturb: move only elements 5, 17 and 300 of that output by N ULPs")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--perturb-step", o.perturb_step, "only perturb this step (-1: every step)");
  app.add_flag("--nondeterministic", o.nondeterministic,
               "bias gradients by an atomics-style index_add kernel: run-to-run differences");
  app.add_flag("--reorder-gemm", o.reorder_gemm, "sum every GEMM in reverse order (reduction-order noise)");
  app.add_option("--nan-at-step", o.nan_at_step,
                 "the bias add of layer 2 leaves a NaN in its output at this step (the NaN path end to end)");
  app.add_option("--batch", o.batch, "samples per step (per rank with --dp)")->check(CLI::Range(1, 4096));
  app.add_option("--dp", o.dp,
                 "data-parallel ranks: this process is rank $RANK, trains on its own data, and averages "
                 "gradients with NCCL's all-reduce kernel (the other ranks' gradients recomputed here)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--flip-bit", o.flip_bit_step,
                 "at this step the SGD update (after the all-reduce) flips one bit of one weight on this "
                 "rank: silent data corruption");
  app.add_option("--profile-step", o.profile_step, "cuProfilerStart/Stop around this step");
  app.add_option("--resume-at", o.resume_at,
                 "a run resumed from a checkpoint saved after N steps: steps 0..N-1 run uncaptured, "
                 "then N..steps-1 with step marks that carry their number (as the PyTorch hooks send "
                 "an optimizer's step count)")
      ->check(CLI::Range(0, 999));
  app.add_option("--kill-after", o.kill_after_launches,
                 "SIGKILL this process after N launches (a trace cut mid-capture)");
  const std::map<std::string, numtrace::sim::SimMemory::Layout> layouts{
      {"tensors", numtrace::sim::SimMemory::Layout::kTensors},
      {"segments", numtrace::sim::SimMemory::Layout::kSegments},
      {"segments-unreported", numtrace::sim::SimMemory::Layout::kSegmentsUnreported}};
  app.add_option("--memory", o.memory,
                 "tensors: one allocation per tensor (cudaMallocAsync); segments: a caching allocator "
                 "whose blocks are reported (the tensor map); segments-unreported: the same, unreported")
      ->transform(CLI::CheckedTransformer(layouts, CLI::ignore_case));
  app.set_version_flag("--version", std::string("numtrace-sim ") + numtrace::kVersion);
  CLI11_PARSE(app, argc, argv);
  if (o.resume_at >= o.steps) {
    std::fprintf(stderr, "numtrace-sim: --resume-at %d leaves no step to run: --steps is %d\n", o.resume_at, o.steps);
    return 2;
  }
  if (o.perturb_ulps > 0 && o.batch * o.classes <= numtrace::sim::kPerturbedElements[2]) {
    std::fprintf(stderr, "numtrace-sim: --perturb-ulps moves element %d of a layer's output: --batch must be at least %d\n",
                 numtrace::sim::kPerturbedElements[2], numtrace::sim::kPerturbedElements[2] / o.classes + 1);
    return 2;
  }
  if (o.dp > 1) {
    // The rank as torchrun and the shim read it (trace format section 1).
    const char* rank = std::getenv("RANK");
    char* end = nullptr;
    const long r = rank != nullptr ? std::strtol(rank, &end, 10) : -1;
    if (rank == nullptr || *rank == '\0' || *end != '\0' || r < 0 || r >= o.dp) {
      std::fprintf(stderr, "numtrace-sim: --dp %d needs RANK set to a rank in 0..%d\n", o.dp, o.dp - 1);
      return 2;
    }
    o.data_shard = static_cast<int>(r);
  }

  auto run = numtrace::sim::RunSimulation(o, [](const char* n) { return std::getenv(n); });
  for (size_t i = 0; i < run.result.losses.size(); ++i) {
    std::printf("step %zu loss %.6f\n", i + o.resume_at, run.result.losses[i]);
  }
  if (!run.trace_path.empty()) std::printf("trace: %s\n", run.trace_path.c_str());
  return 0;
}
