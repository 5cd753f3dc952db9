// Two captures of one program over many steps - the same kernel names and
// layouts in every step - whose values part from some step on pair one to
// one, even when a value repeats by coincidence across steps (a scalar loss
// of step 211 in A equal to that of step 1 in B). Before: that one content
// anchor stranded 3,150 kernels on each side of a 400-step pair.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/align/aligner.h"
#include "test/analyzer/trace_builder.h"

namespace numtrace::analyzer {
namespace {

using testing::In;
using testing::Out;
using testing::TraceBuilder;

constexpr int kSteps = 400;
const char* const kStep[] = {"fill", "sgemm_nn", "bias_add", "relu", "sgemm_nn", "bias_add",
                             "nll_loss_forward", "nll_loss_backward", "sgemm_tn", "relu_backward",
                             "sgemm_tn", "sgemm_nt", "sum_bias", "sgd_update", "sgd_update"};
constexpr int kPerStep = sizeof(kStep) / sizeof(kStep[0]);

// Content of kernel k of `step` in run A; run B equals it before
// `parted_at` and differs after, except for the listed coincidences.
uint64_t ContentA(int step, int k) { return static_cast<uint64_t>(step) * 100 + k + 1; }

struct Coincidence {
  int a_step, b_step, kernel;  // B's kernel `kernel` of b_step equals A's of a_step
};

Trace Build(const char* path, bool is_b, int parted_at, const std::vector<Coincidence>& same) {
  TraceBuilder tb(path);
  for (int s = 0; s < kSteps; ++s) {
    for (int k = 0; k < kPerStep; ++k) {
      uint64_t content = ContentA(s, k);
      if (is_b && s >= parted_at) content += 10'000'000;
      for (const Coincidence& c : same) {
        if (is_b && s == c.b_step && k == c.kernel) content = ContentA(c.a_step, k);
      }
      const bool scalar = k == 6;  // the loss: one element
      tb.Add(kStep[k], {In(4096), Out(content, scalar ? 1 : 1024)});
    }
  }
  return tb.Build();
}

void ExpectDiagonal(const Trace& a, const Trace& b) {
  Alignment al = Align(a, b);
  EXPECT_EQ(al.only_a.size(), 0u);
  EXPECT_EQ(al.only_b.size(), 0u);
  ASSERT_EQ(al.pairs.size(), a.kernels.size());
  size_t off_diagonal = 0;
  for (const KernelPair& p : al.pairs) off_diagonal += p.a != p.b;
  EXPECT_EQ(off_diagonal, 0u);
}

TEST(AlignRepeatedSteps, PerturbedFromTheStartWithACrossStepCoincidence) {
  // The shape of numtrace-sim --steps 400 against --perturb 1.
  Trace a = Build("a", false, 0, {});
  Trace b = Build("b", true, 0, {{211, 1, 6}});
  ExpectDiagonal(a, b);
}

TEST(AlignRepeatedSteps, PartedAtStep250WithCoincidencesBothWays) {
  Trace a = Build("a", false, 250, {});
  Trace b = Build("b", true, 250, {{390, 260, 6}, {255, 380, 6}});
  ExpectDiagonal(a, b);
}

TEST(AlignRepeatedSteps, AnExtraStepInBStillLeavesTheOthersPaired) {
  // A stray anchor is dropped only when its neighbours agree; a real shift
  // (B ran one step more at the start) keeps its anchors.
  Trace a = Build("a", false, kSteps, {});
  TraceBuilder tb("b");
  for (int k = 0; k < kPerStep; ++k) tb.Add(kStep[k], {In(4096), Out(9'000'000 + k)});
  Trace b0 = Build("b", false, kSteps, {});
  for (const Kernel& k : b0.kernels) {
    std::vector<Buffer> bufs(b0.BuffersOf(k).begin(), b0.BuffersOf(k).end());
    tb.Add(std::string(b0.Name(k)), bufs);
  }
  Trace b = tb.Build();
  Alignment al = Align(a, b);
  EXPECT_EQ(al.only_a.size(), 0u);
  EXPECT_EQ(al.only_b.size(), static_cast<size_t>(kPerStep));
  for (const KernelPair& p : al.pairs) ASSERT_EQ(p.b, p.a + kPerStep);
}

}  // namespace
}  // namespace numtrace::analyzer
