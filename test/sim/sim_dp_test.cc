// Data-parallel simulation (--dp): ranks train on their own data, NCCL's
// all-reduce makes their gradients equal, and from there every replica's
// kernels produce the same bytes - unless --flip-bit corrupts one rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/sim/sim_test_util.h"

namespace numtrace::sim {
namespace {

using analyzer::Trace;

constexpr uint64_t kDpKernelsPerStep = 19;  // 15 + one all-reduce per gradient
constexpr uint64_t kFirstAllReduce = 14, kSgd = 18;

Trace DpRank(int world, int rank, int steps, int flip_step, const std::string& dir) {
  MlpOptions o;
  o.steps = steps;
  o.batch = 8;
  o.dp = world;
  o.data_shard = rank;
  o.flip_bit_step = flip_step;
  return ReadRun(RunWithEnv(o, {{"NUMTRACE_WATCH", "full"}, {"RANK", std::to_string(rank)}}, dir));
}

uint64_t Digest(const Trace& t, size_t step, uint64_t index) {
  return t.digest_hashes[t.digests[step].first + index];
}

TEST(SimDpTest, ReplicasAgreeFromTheAllReduceOnAndDifferBeforeIt) {
  const std::string dir = FreshDir("run");
  std::vector<Trace> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(DpRank(3, r, 3, -1, dir));
  for (const Trace& t : ranks) {
    ASSERT_EQ(t.digests.size(), 3u);
    ASSERT_EQ(t.digests[0].kernels, kDpKernelsPerStep);
    EXPECT_EQ(t.strings.View(t.digest_names[kFirstAllReduce]), "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)");
    EXPECT_EQ(t.strings.View(t.digest_names[kSgd]), kSgdKernelName);
  }
  for (size_t step = 0; step < 3; ++step) {
    // The forward GEMM reads each rank's own batch.
    EXPECT_NE(Digest(ranks[0], step, 1), Digest(ranks[1], step, 1));
    EXPECT_NE(Digest(ranks[1], step, 1), Digest(ranks[2], step, 1));
    for (uint64_t i = kFirstAllReduce; i < kDpKernelsPerStep; ++i) {
      EXPECT_EQ(Digest(ranks[0], step, i), Digest(ranks[1], step, i)) << "step " << step << " launch " << i;
      EXPECT_EQ(Digest(ranks[0], step, i), Digest(ranks[2], step, i)) << "step " << step << " launch " << i;
    }
  }
}

TEST(SimDpTest, RankZeroReadsTheSingleProcessRunsData) {
  Trace single = ReadRun(RunWithEnv([] { MlpOptions o; o.steps = 1; o.batch = 8; return o; }(),
                                    {{"NUMTRACE_WATCH", "full"}}, FreshDir("single")));
  Trace rank0 = DpRank(2, 0, 1, -1, FreshDir("dp"));
  // The forward pass of step 0 (weights from the same seed, the same batch).
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(Digest(single, 0, i), Digest(rank0, 0, i)) << "launch " << i;
}

TEST(SimDpTest, AFlippedBitPartsOneRankAtTheSgdUpdateOfThatStep) {
  const std::string dir = FreshDir("run");
  std::vector<Trace> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(DpRank(3, r, 3, r == 1 ? 1 : -1, dir));
  // Step 0: all agree. Step 1: the all-reduce still agrees, the SGD update of rank 1 does not.
  EXPECT_EQ(Digest(ranks[0], 0, kSgd), Digest(ranks[1], 0, kSgd));
  EXPECT_EQ(Digest(ranks[0], 1, kFirstAllReduce), Digest(ranks[1], 1, kFirstAllReduce));
  EXPECT_NE(Digest(ranks[0], 1, kSgd), Digest(ranks[1], 1, kSgd));
  EXPECT_EQ(Digest(ranks[0], 1, kSgd), Digest(ranks[2], 1, kSgd));
  // Step 2: rank 1's weights differ, so does its all-reduce; the others still agree.
  EXPECT_NE(Digest(ranks[0], 2, kFirstAllReduce), Digest(ranks[1], 2, kFirstAllReduce));
  EXPECT_EQ(Digest(ranks[0], 2, kFirstAllReduce), Digest(ranks[2], 2, kFirstAllReduce));
}

}  // namespace
}  // namespace numtrace::sim
