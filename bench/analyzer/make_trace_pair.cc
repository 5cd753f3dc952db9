// File: bench/analyzer/make_trace_pair.cc
//
// numtrace-make-pair: writes a realistic pair of runs for benchmarks, tests
// and the bundled example - trace format v1 files, or torchtitan DebugMode
// activation logs - with the differences described in
// trace_pair_generator.h / debugmode_pair_generator.h and a planted
// divergence whose location it prints.
//
// Example:
//   numtrace-make-pair --kernels 200000 --out-a a.jsonl --out-b b.jsonl --seed 7
//   numtrace-make-pair --format debugmode --kernels 100000 --out-a a.log --out-b b.log
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "common/version/version.h"
#include "bench/analyzer/debugmode_pair_generator.h"
#include "bench/analyzer/step_plan.h"
#include "bench/analyzer/trace_pair_generator.h"

namespace {

void PrintSummary(const numtrace::bench::PairSummary& s, const std::string& a,
                  const std::string& b, const char* unit) {
  using numtrace::bench::kNoSeq;
  std::printf("A: %llu %s, %.1f MB -> %s\n", static_cast<unsigned long long>(s.a_kernels), unit,
              s.a_bytes / 1e6, a.c_str());
  std::printf("B: %llu %s, %.1f MB -> %s\n", static_cast<unsigned long long>(s.b_kernels), unit,
              s.b_bytes / 1e6, b.c_str());
  if (s.divergence_a_seq != kNoSeq) {
    std::printf("planted divergence: A seq %llu = B seq %llu\n",
                static_cast<unsigned long long>(s.divergence_a_seq),
                static_cast<unsigned long long>(s.divergence_b_seq));
  } else {
    std::printf("planted divergence: none (past the end)\n");
  }
  if (s.nan_b_seq != kNoSeq) {
    std::printf("first NaN: B seq %llu\n", static_cast<unsigned long long>(s.nan_b_seq));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a realistic pair of runs (A, B) with a planted divergence."};
  numtrace::bench::PairOptions opt;
  std::string out_a, out_b, format = "ntrace";
  std::string names_dir = NUMTRACE_KERNEL_NAMES_DIR;
  size_t step_len = 0;
  int64_t diverge_at = -1;
  app.add_option("--kernels", opt.kernels, "kernels (ops, for debugmode) in run A")->required();
  app.add_option("--out-a", out_a, "file for run A")->required();
  app.add_option("--out-b", out_b, "file for run B")->required();
  app.add_option("--seed", opt.seed, "seed; the same seed gives the same bytes");
  app.add_option("--diverge-at", diverge_at, "A seq of the planted divergence (default 60% in)");
  app.add_option("--format", format, "ntrace or debugmode")
      ->check(CLI::IsMember({"ntrace", "debugmode"}));
  app.add_option("--names-dir", names_dir, "folder of the real kernel-name lists");
  app.add_option("--step-len", step_len,
                 "keep only the first N kernels of the real step (small examples)");
  app.add_flag("!--no-nan", opt.plant_nan, "do not plant NaN outputs in B after the divergence");
  app.set_version_flag("--version", std::string("numtrace-make-pair ") + numtrace::kVersion);
  CLI11_PARSE(app, argc, argv);
  if (opt.kernels == 0) {
    std::fprintf(stderr, "numtrace-make-pair: --kernels must be at least 1\n");
    return 2;
  }
  if (diverge_at >= 0) opt.diverge_at = static_cast<uint64_t>(diverge_at);

  absl::StatusOr<numtrace::bench::PairSummary> summary;
  const char* unit = "kernels";
  if (format == "debugmode") {
    unit = "ops";
    summary = numtrace::bench::WriteDebugModePair(opt, out_a, out_b);
  } else {
    absl::StatusOr<numtrace::bench::StepPlan> plan =
        numtrace::bench::LoadStepPlan(names_dir, step_len);
    if (!plan.ok()) {
      std::fprintf(stderr, "numtrace-make-pair: %s\n", std::string(plan.status().message()).c_str());
      return 2;
    }
    summary = numtrace::bench::WriteTracePair(*plan, opt, out_a, out_b);
  }
  if (!summary.ok()) {
    std::fprintf(stderr, "numtrace-make-pair: %s\n", std::string(summary.status().message()).c_str());
    return 2;
  }
  PrintSummary(*summary, out_a, out_b, unit);
  return 0;
}
