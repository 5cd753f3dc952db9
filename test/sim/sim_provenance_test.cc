// Provenance end to end on the simulated loop: every captured kernel carries
// the scope, op and phase the loop announces (as the PyTorch hooks would for
// its module tree, sim/mlp_trainer.h); a change planted in fc1 or fc2 is
// reported in that module, phase forward, by the JSON summary, the terminal
// and the HTML report, and in origins.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/provenance.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/rank_diff.h"
#include "analyzer/report/terminal_summary.h"
#include "simdjson.h"
#include "test/sim/sim_test_util.h"

namespace numtrace::sim {
namespace {

using analyzer::Trace;

TEST(SimProvenanceTest, EveryCapturedKernelHasScopeOpAndPhase) {
  MlpOptions o;
  o.steps = 3;
  const Trace t = ReadRun(RunWithEnv(o, {{"NUMTRACE_STEPS", "1"}}, FreshDir("p")));
  ASSERT_FALSE(t.kernels.empty());
  std::set<Phase> phases;
  std::set<std::string> scopes;
  for (const auto& k : t.kernels) {
    ASSERT_TRUE(t.Scope(k).has_value()) << "seq " << k.seq << " " << t.Name(k);
    ASSERT_TRUE(t.Op(k).has_value()) << "seq " << k.seq;
    EXPECT_EQ(t.Op(k)->substr(0, 6), "aten::") << *t.Op(k);
    ASSERT_NE(t.PhaseOf(k), Phase::kNone) << "seq " << k.seq;
    phases.insert(t.PhaseOf(k));
    scopes.insert(std::string(*t.Scope(k)));
  }
  EXPECT_EQ(phases, (std::set<Phase>{Phase::kForward, Phase::kBackward, Phase::kOptimizer}));
  EXPECT_EQ(scopes, (std::set<std::string>{"", kModuleFc1, kModuleFc2, kModuleLoss}));
  // The fused Triton kernel names the ops it was generated from.
  bool fused = false;
  for (const auto& k : t.kernels) {
    if (t.Name(k) == kTritonBiasReluName) {
      fused = true;
      EXPECT_EQ(*t.Op(k), "aten::add+aten::relu");
      EXPECT_EQ(*t.Scope(k), kModuleFc1);
    }
  }
  EXPECT_TRUE(fused);
  // The last kernel is the optimizer's, on the root module's parameters.
  EXPECT_EQ(t.PhaseOf(t.kernels.back()), Phase::kOptimizer);
  EXPECT_EQ(*t.Scope(t.kernels.back()), "");
}

struct Report {
  Trace a, b;
  analyzer::DiffResult result;
  std::string json, terminal, html;
};

Report Diff(int layer) {
  MlpOptions ref;
  ref.steps = 3;
  MlpOptions changed = ref;
  changed.perturb_layer = layer;
  changed.perturb_step = 1;
  Report r;
  const Env env{{"NUMTRACE_STEPS", "1"}};
  r.a = ReadRun(RunWithEnv(ref, env, FreshDir("a")));
  r.b = ReadRun(RunWithEnv(changed, env, FreshDir("b")));
  r.result = analyzer::Judge(r.a, r.b, analyzer::Align(r.a, r.b));
  analyzer::DiffReport report;
  report.path_a = "a";
  report.path_b = "b";
  report.ranks.push_back({0, &r.a, &r.b, &r.result});
  r.json = analyzer::JsonSummary(report);
  analyzer::TerminalOptions topt;
  topt.color = false;
  r.terminal = analyzer::TerminalSummary(report, topt);
  r.html = analyzer::HtmlReport(report, {});
  return r;
}

class PlantedModuleTest : public ::testing::TestWithParam<int> {};

TEST_P(PlantedModuleTest, FirstDivergenceIsInThePlantedModule) {
  const int layer = GetParam();
  const std::string module = layer == 1 ? kModuleFc1 : kModuleFc2;
  const Report r = Diff(layer);
  ASSERT_TRUE(r.result.first_divergence.has_value());

  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(r.json);
  simdjson::dom::element fd = doc["first_divergence"];
  EXPECT_EQ(std::string_view(fd["a_scope"]), module) << r.json;
  EXPECT_EQ(std::string_view(fd["b_scope"]), module);
  EXPECT_EQ(std::string_view(fd["a_op"]), "aten::mm");
  EXPECT_EQ(std::string_view(fd["phase"]), "forward");
  // Origins carry it too: the planted GEMM is where the difference is born.
  simdjson::dom::element first_origin = doc["origins"]["first"];
  EXPECT_EQ(std::string_view(first_origin["a_scope"]), module) << r.json;
  // The per-module roll-up: the planted module has a first divergence; for
  // fc2 the earlier module fc1 has none in forward (it diverges in backward).
  bool found = false;
  for (simdjson::dom::element m : doc["modules"].get_array()) {
    if (std::string_view(m["scope"]) == module) {
      found = true;
      EXPECT_GT(uint64_t(m["diverged"]), 0u);
      EXPECT_EQ(std::string_view(m["first_divergence"]["phase"]), "forward");
    }
  }
  EXPECT_TRUE(found) << r.json;

  EXPECT_NE(r.terminal.find("in " + module + " (aten::mm, forward)"), std::string::npos) << r.terminal;
  EXPECT_NE(r.html.find("\"scopes\":["), std::string::npos);
  EXPECT_NE(r.html.find(module + " (aten::mm, forward)"), std::string::npos);
  EXPECT_NE(r.html.find("\"modules\":[{"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Layers, PlantedModuleTest, ::testing::Values(1, 2));

TEST(SimProvenanceTest, TwoLayersGiveTwoDifferentScopes) {
  const Report r1 = Diff(1), r2 = Diff(2);
  const auto scope = [](const Report& r) {
    const auto& p = r.result.alignment.pairs[*r.result.first_divergence];
    return std::string(*r.a.Scope(r.a.kernels[p.a]));
  };
  EXPECT_EQ(scope(r1), kModuleFc1);
  EXPECT_EQ(scope(r2), kModuleFc2);
}

}  // namespace
}  // namespace numtrace::sim
