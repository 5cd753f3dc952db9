#include "common/format/environment.h"

#include <gtest/gtest.h>

#include <set>

#include "common/format/jsonl_writer.h"
#include "common/format/records.h"

namespace numtrace {
namespace {

TEST(EnvironmentTest, HeaderWritesEnvironmentObjectAndRecord) {
  TraceHeader h;
  h.producer = "p";
  std::string line;
  AppendJsonLine(h, &line);
  EXPECT_EQ(line.find("environment"), std::string::npos) << "empty: absent";
  h.environment = {{"gpu.name", "NVIDIA H200"}, {"env.NCCL_ALGO", "Tree"}};
  line.clear();
  AppendJsonLine(h, &line);
  EXPECT_NE(line.find(R"("environment":{"gpu.name":"NVIDIA H200","env.NCCL_ALGO":"Tree"}})"), std::string::npos)
      << line;
  EnvironmentRecord r;
  r.values = {{"torch.matmul.allow_tf32", "true"}};
  line.clear();
  AppendJsonLine(r, &line);
  EXPECT_EQ(line, "{\"type\":\"environment\",\"values\":{\"torch.matmul.allow_tf32\":\"true\"}}\n");
}

TEST(EnvironmentTest, EverySpecKeyIsKnownWithAnEffect) {
  for (std::string_view key :
       {"torch.version", "torch.git", "torch.cuda", "torch.cudnn", "torch.nccl", "triton.version",
        "python.version", "gpu.name", "gpu.uuid", "gpu.sm_count", "gpu.cc", "driver.version", "cuda.runtime",
        "cublas.version", "cudnn.version", "nccl.version", "torch.float32_matmul_precision",
        "torch.matmul.allow_tf32", "torch.cudnn.allow_tf32", "torch.matmul.fp32_precision",
        "torch.cudnn.conv.fp32_precision", "torch.matmul.allow_fp16_reduced_precision_reduction",
        "torch.matmul.allow_bf16_reduced_precision_reduction", "torch.deterministic_algorithms",
        "torch.fill_uninitialized_memory", "torch.cudnn.deterministic", "torch.cudnn.benchmark",
        "torch.cudnn.enabled", "torch.sdp.flash", "torch.sdp.mem_efficient", "torch.sdp.math", "torch.sdp.cudnn",
        "torch.autocast.cuda", "inductor.emulate_precision_casts", "inductor.fallback_random",
        "inductor.max_autotune", "inductor.coordinate_descent_tuning", "inductor.some_numerics_mode",
        "env.CUBLAS_WORKSPACE_CONFIG", "env.NCCL_ALGO", "env.NCCL_PROTO", "env.NCCL_MIN_NCHANNELS",
        "env.NVTE_ALLOW_NONDETERMINISTIC_ALGO", "env.TORCHINDUCTOR_FREEZING", "env.PYTORCH_CUDA_ALLOC_CONF",
        "env.CUDA_LAUNCH_BLOCKING", "env.OMP_NUM_THREADS", "job.git", "job.cwd", "job.world_size"}) {
    const EnvironmentKey* k = FindEnvironmentKey(key);
    ASSERT_NE(k, nullptr) << key;
    EXPECT_FALSE(k->effect.empty()) << key;
  }
  EXPECT_EQ(FindEnvironmentKey("something.else"), nullptr);
  EXPECT_EQ(FindEnvironmentKey("env.HOME"), nullptr);
  // Every key of the table is reachable: no family shadows a later exact key.
  for (const EnvironmentKey& k : EnvironmentKeys()) {
    if (k.key.find('*') == std::string_view::npos) {
      EXPECT_EQ(FindEnvironmentKey(k.key), &k) << k.key;
    }
  }
}

TEST(EnvironmentTest, RecordedVariablesAreTheListedFamilies) {
  for (std::string_view name : {"CUBLAS_WORKSPACE_CONFIG", "NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS",
                                "NCCL_MAX_NCHANNELS", "NCCL_NCHANNELS_PER_NET_PEER", "NVTE_FLASH_ATTN",
                                "TORCHINDUCTOR_MAX_AUTOTUNE", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_LAUNCH_BLOCKING",
                                "OMP_NUM_THREADS"}) {
    EXPECT_TRUE(IsRecordedVariable(name)) << name;
  }
  for (std::string_view name : {"HOME", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "PATH", "", "NUMTRACE_STEPS"}) {
    EXPECT_FALSE(IsRecordedVariable(name)) << name;
  }
  for (std::string_view name : RecordedVariableNames()) EXPECT_TRUE(IsRecordedVariable(name)) << name;
}

TEST(EnvironmentTest, MergeReplacesInPlaceAndAppends) {
  EnvironmentValues base = {{"a", "1"}, {"b", "2"}};
  MergeEnvironment(&base, {{"b", "3"}, {"c", "4"}});
  EnvironmentValues want = {{"a", "1"}, {"b", "3"}, {"c", "4"}};
  EXPECT_EQ(base, want);
  ASSERT_NE(FindEnvironmentValue(base, "c"), nullptr);
  EXPECT_EQ(*FindEnvironmentValue(base, "c"), "4");
  EXPECT_EQ(FindEnvironmentValue(base, "d"), nullptr);
}

TEST(EnvironmentTest, AffectedLaunches) {
  const EnvAffects tf32 = FindEnvironmentKey("torch.matmul.allow_tf32")->affects;
  EXPECT_TRUE(EnvironmentAffectsLaunch(tf32, "ampere_sgemm_64x32_sliced1x4_nn", ""));
  EXPECT_TRUE(EnvironmentAffectsLaunch(tf32, "aten::addmm", "aten::addmm"));
  EXPECT_FALSE(EnvironmentAffectsLaunch(tf32, "vectorized_elementwise_kernel", "aten::add"));
  const EnvAffects det = FindEnvironmentKey("torch.deterministic_algorithms")->affects;
  EXPECT_TRUE(EnvironmentAffectsLaunch(det, "indexing_backward_kernel", ""));
  EXPECT_TRUE(EnvironmentAffectsLaunch(det, "void at::native::indexFuncSmallIndex<float, long>", ""));
  EXPECT_TRUE(EnvironmentAffectsLaunch(det, "aten::index_add_", "aten::index_add_"));
  EXPECT_FALSE(EnvironmentAffectsLaunch(det, "ampere_sgemm", ""));
  const EnvAffects nccl = FindEnvironmentKey("env.NCCL_ALGO")->affects;
  EXPECT_TRUE(EnvironmentAffectsLaunch(nccl, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ""));
  EXPECT_FALSE(EnvironmentAffectsLaunch(FindEnvironmentKey("gpu.uuid")->affects, "anything", ""));
}

std::set<std::string> RiskKeys(const EnvironmentValues& v, bool cuda, int64_t world) {
  std::set<std::string> keys;
  for (const RunToRunRisk& r : RunToRunRisks(v, cuda, world)) {
    EXPECT_FALSE(r.why.empty());
    keys.insert(r.key);
  }
  return keys;
}

TEST(EnvironmentTest, RunToRunRisks) {
  EnvironmentValues loose = {{"torch.deterministic_algorithms", "false"}, {"torch.cudnn.benchmark", "true"}};
  EXPECT_EQ(RiskKeys(loose, true, 2),
            (std::set<std::string>{"torch.deterministic_algorithms", "torch.cudnn.benchmark",
                                   "env.CUBLAS_WORKSPACE_CONFIG", "env.NCCL_ALGO"}));
  // On the CPU the CUDA settings do not count; one rank needs no NCCL_ALGO.
  EXPECT_EQ(RiskKeys(loose, false, 1), (std::set<std::string>{"torch.deterministic_algorithms"}));
  EnvironmentValues pinned = {{"torch.deterministic_algorithms", "true"},
                              {"torch.cudnn.benchmark", "false"},
                              {"torch.cudnn.deterministic", "false"},
                              {"env.CUBLAS_WORKSPACE_CONFIG", ":4096:8"},
                              {"env.NCCL_ALGO", "Ring"}};
  EXPECT_TRUE(RiskKeys(pinned, true, 8).empty());
  SetEnvironmentValue(&pinned, "env.CUBLAS_WORKSPACE_CONFIG", ":0:0");
  EXPECT_EQ(RiskKeys(pinned, true, 8), (std::set<std::string>{"env.CUBLAS_WORKSPACE_CONFIG"}));
}

}  // namespace
}  // namespace numtrace
