// Known-answer tests for analyzer/align/aligner.h: each case builds two
// traces whose true correspondence is known and checks the pairs and how
// they were made.
#include "analyzer/align/aligner.h"
#include "analyzer/align/kernel_keys.h"
#include "analyzer/read/importer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/names/normalize.h"
#include "gtest/gtest.h"
#include "test/analyzer/trace_builder.h"
#include "test/util/kernel_names.h"

namespace numtrace::analyzer {
namespace {

using testing::In;
using testing::Out;
using testing::TraceBuilder;

std::vector<std::string> StepNames(const std::string& file) { return numtrace::testing::LoadKernelNames(file); }

uint64_t HashLike(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// a -> (b, method) for every pair; checks the documented invariants on the way.
std::map<uint32_t, std::pair<uint32_t, MatchMethod>> PairMap(const Alignment& al, const Trace& a, const Trace& b) {
  std::map<uint32_t, std::pair<uint32_t, MatchMethod>> m;
  std::vector<char> seen_b(b.kernels.size());
  uint32_t last_a = 0, last_b = 0;
  bool first = true;
  for (const KernelPair& p : al.pairs) {
    EXPECT_TRUE(first || p.a > last_a) << "pairs not sorted by a";
    if (p.method != MatchMethod::kOverride) {
      EXPECT_TRUE(first || p.b > last_b) << "b not increasing at a=" << p.a;
      last_b = p.b;
      first = false;
    }
    last_a = p.a;
    EXPECT_FALSE(seen_b[p.b]) << "b paired twice: " << p.b;
    seen_b[p.b] = 1;
    m[p.a] = {p.b, p.method};
  }
  EXPECT_EQ(al.pairs.size() + al.only_a.size(), a.kernels.size());
  EXPECT_EQ(al.pairs.size() + al.only_b.size(), b.kernels.size());
  return m;
}

constexpr const char* kAdd = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                             "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
constexpr const char* kMul = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
                             "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, "
                             "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
                             "at::detail::Array<char*, 3>)";
constexpr const char* kFill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                              "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";

TEST(Align, ExtraAndMissingKernels) {
  // B has an extra fill and a cast-like copy; A has a kernel B lacks.
  TraceBuilder ta("a"), tb("b");
  for (int i = 0; i < 20; ++i) ta.Add(i % 2 ? kAdd : kMul, {In(4096), Out(i)});
  for (int i = 0; i < 20; ++i) {
    if (i == 5) tb.Add(kFill, {Out(1000)});
    if (i == 12) continue;  // missing in B
    tb.Add(i % 2 ? kAdd : kMul, {In(4096), Out(i)});
    if (i == 15) tb.Add("void cast_kernel<float>(float*)", {Out(2000)});
  }
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  auto m = PairMap(al, a, b);
  EXPECT_EQ(al.pairs.size(), 19u);
  EXPECT_EQ(al.only_a, std::vector<uint32_t>{12});
  EXPECT_EQ(al.only_b, (std::vector<uint32_t>{5, 16}));
  EXPECT_EQ(m[4].first, 4u);
  EXPECT_EQ(m[5].first, 6u);
  EXPECT_EQ(m[13].first, 13u);
  EXPECT_EQ(m[16].first, 17u);
  for (auto& [ia, pb] : m) EXPECT_EQ(pb.second, MatchMethod::kExact);
}

// A kernel A ran twice with the same name and outputs is no anchor (it is
// not unique there): the one launch B has pairs with A's first, in order,
// not with whichever occurrence the anchor search meets last.
TEST(Align, AKeyRepeatedInAIsNoAnchor) {
  // The ends differ in content (no common prefix or suffix pairs them
  // early); A's add(Out 1) twice, B's once.
  TraceBuilder ta("a"), tb("b");
  ta.Add(kMul, {In(4096), Out(100)});
  ta.Add(kAdd, {In(4096), Out(1)});
  ta.Add(kFill, {Out(5)});
  ta.Add(kAdd, {In(4096), Out(1)});
  ta.Add(kMul, {In(4096), Out(200)});
  tb.Add(kMul, {In(4096), Out(101)});
  tb.Add(kAdd, {In(4096), Out(1)});
  tb.Add(kMul, {In(4096), Out(201)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  auto m = PairMap(al, a, b);
  ASSERT_TRUE(m.count(1)) << "B's add pairs with A's first add";
  EXPECT_EQ(m[1].first, 1u);
  EXPECT_FALSE(m.count(3));
}

TEST(Align, RepeatedNamesWithShiftedContentPairInOrder) {
  // One name repeated 300 times, contents differ everywhere (a diverged run):
  // pairs stay in launch order.
  TraceBuilder ta("a"), tb("b");
  for (int i = 0; i < 300; ++i) ta.Add(kAdd, {Out(i)});
  for (int i = 0; i < 300; ++i) tb.Add(kAdd, {Out(i + 5000)});
  Trace a = ta.Build(), b = tb.Build();
  auto m = PairMap(Align(a, b), a, b);
  ASSERT_EQ(m.size(), 300u);
  for (auto& [ia, pb] : m) EXPECT_EQ(pb.first, ia);
}

TEST(Align, InductorCountersAndTemplateSpellingsPairFuzzy) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("triton_poi_fused_add_mul_3", {Out(1)});
  ta.Add("triton_red_fused_sum_7", {Out(2)});
  ta.Add("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, "
         "std::array<char *, (unsigned long)3>>(int, T2, T3)", {Out(3, 512, DType::kBF16)});
  tb.Add("triton_poi_fused_add_mul_11", {Out(1)});
  tb.Add("triton_red_fused_sum_2", {Out(2)});
  tb.Add("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
         "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
         {Out(3, 512, DType::kBF16)});
  Trace a = ta.Build(), b = tb.Build();
  auto m = PairMap(Align(a, b), a, b);
  ASSERT_EQ(m.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(m[i].first, i);
    EXPECT_EQ(m[i].second, MatchMethod::kFuzzy);
  }
}

TEST(Align, FusedKernelPairsWithTheKernelWhoseOutputItReproduces) {
  // A: ... mul -> add ...; B: ... triton_poi_fused_add_mul ... writing add's output.
  TraceBuilder ta("a"), tb("b");
  ta.Add(kFill, {Out(100)});
  ta.Add(kMul, {In(4096), Out(101)});
  ta.Add(kAdd, {In(4096), Out(102)});
  ta.Add("void at::native::reduce_kernel<512, 1>(float*)", {Out(103, 1)});
  tb.Add(kFill, {Out(100)});
  tb.Add("triton_poi_fused_add_mul_0", {In(4096), In(4096), Out(102)});
  tb.Add("void at::native::reduce_kernel<512, 1>(float*)", {Out(103, 1)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  auto m = PairMap(al, a, b);
  EXPECT_EQ(al.only_a, std::vector<uint32_t>{1});
  ASSERT_TRUE(m.count(2));
  EXPECT_EQ(m[2].first, 1u);
  EXPECT_EQ(m[2].second, MatchMethod::kValue);
  EXPECT_EQ(m[3].first, 2u);
}

TEST(Align, FusedKernelFallsBackToCloseStatisticsWhenHashesDiffer) {
  // The fused kernel rounds differently: no equal hash, but add's statistics
  // are within a few percent while mul's are far.
  TraceBuilder ta("a"), tb("b");
  ta.Add(kMul, {Out(40)});
  ta.Add(kAdd, {Out(500)});
  Buffer fused = Out(500);
  fused.stats.hash ^= 1;
  fused.stats.l2 *= 1.001;
  tb.Add("triton_poi_fused_add_mul_0", {fused});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  ASSERT_EQ(al.pairs.size(), 1u);
  EXPECT_EQ(al.pairs[0].a, 1u);
  EXPECT_EQ(al.pairs[0].method, MatchMethod::kValue);
}

// The A100 step as A; B is the same step as a V100 would run it: every
// cutlass GEMM replaced by a volta_sgemm kernel (same output), a cuBLASLt
// epilogue kernel after every 10th GEMM, some copies missing. ATen kernels
// must pair exact, GEMMs fuzzy, all with their true counterpart.
TEST(Align, A100StepAgainstV100StyleStep) {
  std::vector<std::string> names = StepNames("6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt");
  ASSERT_EQ(names.size(), 1428u);
  TraceBuilder ta("a100"), tb("v100");
  std::vector<int64_t> truth;  // B index of each A kernel, -1 when dropped
  int gemms = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    // Layout from the normalised name (same op, same buffers); unique content.
    uint64_t bytes = 4096 * (1 + HashLike(NormalizedName(names[i])) % 7);
    std::vector<Buffer> buffers = {In(bytes), Out(i, bytes / 4)};
    ta.Add(names[i], buffers);
    bool gemm = names[i].find("cutlass_80_tensorop") != std::string::npos;
    if (KernelFamily(names[i]) != "gemm" && i % 97 == 13) {  // dropped on B
      truth.push_back(-1);
      continue;
    }
    truth.push_back(static_cast<int64_t>(tb.trace().kernels.size()));
    if (gemm) {
      tb.Add(i % 3 ? "volta_sgemm_128x32_nn" : "volta_sgemm_32x32_sliced1x4_tn", {In(bytes), In(8192), Out(i, bytes / 4)});
      if (++gemms % 10 == 0) {
        tb.Add("void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, "
               "cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)",
               {Out(900000 + i, 64)});
      }
    } else {
      tb.Add(names[i], buffers);
    }
  }
  ASSERT_GT(gemms, 100);
  Trace a = ta.Build(), b = tb.Build();
  auto start = std::chrono::steady_clock::now();
  Alignment al = Align(a, b);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ info ] A100 vs V100-style step: %zu pairs, %zu only_a, %zu only_b in %.1f ms\n", al.pairs.size(),
              al.only_a.size(), al.only_b.size(), ms);
  auto m = PairMap(al, a, b);
  int exact = 0, fuzzy = 0, wrong = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    auto it = m.find(static_cast<uint32_t>(i));
    if (truth[i] < 0) {
      EXPECT_TRUE(it == m.end()) << "dropped kernel " << i << " was paired";
      continue;
    }
    if (it == m.end() || it->second.first != truth[i]) {
      ++wrong;
      continue;
    }
    bool gemm = names[i].find("cutlass_80_tensorop") != std::string::npos;
    EXPECT_EQ(it->second.second, gemm ? MatchMethod::kFuzzy : MatchMethod::kExact) << i;
    (gemm ? fuzzy : exact)++;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(fuzzy, gemms);
  EXPECT_GT(exact, 1100);
  EXPECT_EQ(al.only_b.size(), static_cast<size_t>(gemms / 10));
}

// Real A100 and V100 steps (two different runs, no ground truth): pairs never
// join kernels of different families, and most kernels find a partner.
TEST(Align, RealA100AndV100StepsPairWithinFamilies) {
  std::vector<std::string> na = StepNames("6a_seq_trainstep_recsys_A100_rank3of8_fullstep_fullnames.txt");
  std::vector<std::string> nb = StepNames("6b_seq_trainstep_recsys_V100_rank1of2_fullstep_fullnames.txt");
  TraceBuilder ta("a"), tb("b");
  for (size_t i = 0; i < na.size(); ++i) ta.Add(na[i], {Out(i)});
  for (size_t i = 0; i < nb.size(); ++i) tb.Add(nb[i], {Out(100000 + i)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  PairMap(al, a, b);
  size_t exact = 0, fuzzy_gemm = 0;
  for (const KernelPair& p : al.pairs) {
    std::string fa = KernelFamily(na[p.a]), fb = KernelFamily(nb[p.b]);
    if (p.method != MatchMethod::kValue) {
      EXPECT_EQ(fa, fb) << na[p.a] << " vs " << nb[p.b];
    }
    exact += p.method == MatchMethod::kExact;
    fuzzy_gemm += p.method == MatchMethod::kFuzzy && fa == "gemm";
  }
  std::printf("[ info ] real 6a vs 6b: %zu pairs (%zu exact, %zu fuzzy gemm), %zu only_a, %zu only_b\n",
              al.pairs.size(), exact, fuzzy_gemm, al.only_a.size(), al.only_b.size());
  // The two runs differ in structure (other rank count, other stream
  // interleaving): the longest in-order matching by family bounds what any
  // order-preserving alignment can pair. Ours must reach most of it.
  std::vector<std::string> fa, fb;
  for (const auto& n : na) fa.push_back(KernelFamily(n));
  for (const auto& n : nb) fb.push_back(KernelFamily(n));
  std::vector<int> prev(fb.size() + 1, 0), cur(fb.size() + 1, 0);
  for (size_t i = 0; i < fa.size(); ++i) {
    for (size_t j = 0; j < fb.size(); ++j) {
      cur[j + 1] = fa[i] == fb[j] ? prev[j] + 1 : std::max(prev[j + 1], cur[j]);
    }
    std::swap(prev, cur);
  }
  size_t bound = prev[fb.size()];
  std::printf("[ info ] in-order family matching bound: %zu\n", bound);
  EXPECT_GE(static_cast<double>(al.pairs.size()), 0.8 * bound);
  EXPECT_GT(exact, 500u);
  EXPECT_GT(fuzzy_gemm, 100u);
}

// 6c: early Triton names (`triton__0d1d2d`) shared by different kernels. B
// drops a few kernels and diverges in content from the middle on; kernels
// sharing a name are told apart by buffer layout.
TEST(Align, SharedTritonNamesToldApartByLayout) {
  std::vector<std::string> names = StepNames("6c_seq_trainstep_compiled_A100_rank0of16_fullstep_fullnames.txt");
  ASSERT_GT(names.size(), 1000u);
  TraceBuilder ta("a"), tb("b");
  std::vector<int64_t> truth;
  int triton = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    bool shared = names[i].rfind("triton__", 0) == 0;
    triton += shared;
    // Each Triton occurrence is a different kernel: its own buffer sizes.
    uint64_t bytes = shared ? 256 * (i + 1) : 4096;
    ta.Add(names[i], {In(bytes), Out(i, bytes / 4)});
    // Drops only where contents still agree: a kernel dropped from a run of
    // identical launches with diverged contents cannot be told from its twin.
    bool drop = !shared && i % 50 == 7 && i < names.size() / 2;
    if (drop) {
      truth.push_back(-1);
      continue;
    }
    truth.push_back(static_cast<int64_t>(tb.trace().kernels.size()));
    uint64_t content = i < names.size() / 2 ? i : i + 777777;
    tb.Add(names[i], {In(bytes), Out(content, bytes / 4)});
  }
  ASSERT_GE(triton, 10);
  Trace a = ta.Build(), b = tb.Build();
  auto m = PairMap(Align(a, b), a, b);
  int wrong = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    auto it = m.find(static_cast<uint32_t>(i));
    if (truth[i] < 0) {
      EXPECT_TRUE(it == m.end()) << i;
    } else if (it == m.end() || it->second.first != truth[i]) {
      ++wrong;
      ADD_FAILURE() << "kernel " << i << " " << names[i].substr(0, 80);
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(Align, SharedNameWithDifferentKernelsMissingOneOccurrence) {
  // Three different kernels all named triton__0d1d2d; B lacks the middle one.
  TraceBuilder ta("a"), tb("b");
  ta.Add("triton__0d1d2d", {In(1024), Out(1, 256)});
  ta.Add("triton__0d1d2d", {In(2048), Out(2, 512)});
  ta.Add("triton__0d1d2d", {In(4096), Out(3, 1024)});
  tb.Add("triton__0d1d2d", {In(1024), Out(11, 256)});
  tb.Add("triton__0d1d2d", {In(4096), Out(13, 1024)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  auto m = PairMap(al, a, b);
  EXPECT_EQ(al.only_a, std::vector<uint32_t>{1});
  EXPECT_EQ(m[0].first, 0u);
  EXPECT_EQ(m[2].first, 1u);
}

TEST(Align, IdenticalNamesOfOtherShapesPairByShapeNotByPosition) {
  // One name, three shapes; B lacks the first: the name alone would pair it
  // with B's first kernel (a layout "divergence" that is a pairing error).
  TraceBuilder ta("a"), tb("b");
  ta.Add("void at::native::elementwise_kernel<128, 4>", {In(1024), Out(1, 256)});
  ta.Add("void at::native::elementwise_kernel<128, 4>", {In(2048), Out(2, 512)});
  ta.Add("void at::native::elementwise_kernel<128, 4>", {In(4096), Out(3, 1024)});
  tb.Add("void at::native::elementwise_kernel<128, 4>", {In(2048), Out(12, 512)});
  tb.Add("void at::native::elementwise_kernel<128, 4>", {In(4096), Out(13, 1024)});
  Trace a = ta.Build(), b = tb.Build();
  Alignment al = Align(a, b);
  auto m = PairMap(al, a, b);
  EXPECT_EQ(al.only_a, std::vector<uint32_t>{0});
  EXPECT_EQ(m[1].first, 0u);
  EXPECT_EQ(m[2].first, 1u);
}

TEST(Align, OverridesForcePairsAndReportKeysThatMatchNothing) {
  TraceBuilder ta("a"), tb("b");
  ta.Add("k_x", {Out(1)});
  ta.Add("k_y", {Out(2)});
  ta.Add("k_z", {Out(3)});
  tb.Add("k_x", {Out(1)});
  tb.Add("k_y", {Out(2)});
  tb.Add("other", {Out(9)});
  Trace a = ta.Build(), b = tb.Build();
  AlignOptions options;
  absl::StatusOr<Overrides> o = ParseOverrides(
      "# force z onto the odd one, and x and y crossed\n"
      "k_z#0, seq:2\n"
      "seq:0, k_y#0\n"
      "seq:1, k_x#0\n"
      "k_q#0, seq:0\n",
      "pairs.txt");
  ASSERT_TRUE(o.ok()) << o.status();
  options.overrides = *o;
  Alignment al = Align(a, b, options);
  auto m = PairMap(al, a, b);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], std::make_pair(1u, MatchMethod::kOverride));
  EXPECT_EQ(m[1], std::make_pair(0u, MatchMethod::kOverride));
  EXPECT_EQ(m[2], std::make_pair(2u, MatchMethod::kOverride));
  ASSERT_EQ(al.warnings.size(), 1u);
  EXPECT_NE(al.warnings[0].find("pairs.txt:5"), std::string::npos) << al.warnings[0];
  EXPECT_NE(al.warnings[0].find("k_q#0"), std::string::npos) << al.warnings[0];
  // Without the overrides the same traces pair by name.
  auto plain = PairMap(Align(a, b), a, b);
  EXPECT_EQ(plain[0], std::make_pair(0u, MatchMethod::kExact));
  EXPECT_EQ(plain[1], std::make_pair(1u, MatchMethod::kExact));
}

// Scale: two 200k-kernel traces built from a repeating layer pattern. B has
// ~0.5% kernels inserted and ~0.5% removed, and its contents diverge from
// 60% on. Near-linear alignment must recover the true pairs.
TEST(Align, TwoHundredThousandKernels) {
  const int kN = 200000;
  std::mt19937_64 rng(42);
  std::vector<std::string> pool;
  for (int i = 0; i < 40; ++i) pool.push_back("kernel_op_" + std::to_string(i));
  TraceBuilder ta("a"), tb("b");
  std::vector<int64_t> truth;
  for (int i = 0; i < kN; ++i) {
    int op = (i * 7 + i / 40) % 40;
    uint64_t bytes = 1024u * (1 + (i % 40) % 9);
    ta.Add(pool[op], {In(bytes), Out(i, bytes / 4)});
    if (rng() % 200 == 0) tb.Add("inserted_fill", {Out(5000000 + i, 8)});
    if (rng() % 200 == 0) {
      truth.push_back(-1);
      continue;
    }
    truth.push_back(static_cast<int64_t>(tb.trace().kernels.size()));
    uint64_t content = i < kN * 6 / 10 ? i : i + 10000000;
    tb.Add(pool[op], {In(bytes), Out(content, bytes / 4)});
  }
  Trace a = ta.Build(), b = tb.Build();
  auto start = std::chrono::steady_clock::now();
  Alignment al = Align(a, b);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ info ] 200k x %zu kernels aligned in %.2f s: %zu pairs, %zu only_a, %zu only_b\n",
              b.kernels.size(), s, al.pairs.size(), al.only_a.size(), al.only_b.size());
  auto m = PairMap(al, a, b);
  size_t right = 0, expected = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    if (truth[i] < 0) continue;
    ++expected;
    auto it = m.find(static_cast<uint32_t>(i));
    right += it != m.end() && it->second.first == truth[i];
  }
  std::printf("[ info ] %zu of %zu true pairs recovered\n", right, expected);
  EXPECT_GE(static_cast<double>(right), 0.995 * expected);
}

}  // namespace
}  // namespace numtrace::analyzer

namespace numtrace::analyzer {
namespace {

// Provenance as the reader records it: scope and phase of kernel `k`.
void SetWhere(Trace* t, uint32_t k, std::string_view scope, Phase phase) {
  KernelProvenance p;
  p.scope = t->strings.Intern(scope);
  p.phase = phase;
  t->SetProvenance(k, p);
}

// A: mul in fc1, add in fc2; B: a fused Triton kernel of fc2 whose output
// matches neither (other numerics): names and values say nothing, the scope does.
void BuildFusedCase(TraceBuilder* ta, TraceBuilder* tb) {
  ta->Add(kFill, {Out(100)});
  ta->Add(kMul, {In(4096), Out(101)});
  ta->Add(kAdd, {In(4096), Out(102)});
  ta->Add("void at::native::reduce_kernel<512, 1>(float*)", {Out(103, 1)});
  tb->Add(kFill, {Out(100)});
  tb->Add("triton_poi_fused_0", {In(4096), Out(555)});
  tb->Add("void at::native::reduce_kernel<512, 1>(float*)", {Out(103, 1)});
}

TEST(AlignProvenance, SameScopeAndPhasePairsAFusedKernelWithItsModulesKernel) {
  TraceBuilder ta("a"), tb("b");
  BuildFusedCase(&ta, &tb);
  Trace a = ta.Build(), b = tb.Build();
  SetWhere(&a, 1, "fc1", Phase::kForward);
  SetWhere(&a, 2, "fc2", Phase::kForward);
  SetWhere(&b, 1, "fc2", Phase::kForward);
  Alignment al = Align(a, b);
  auto m = PairMap(al, a, b);
  ASSERT_TRUE(m.count(2)) << "fc2's add paired with fc2's fused kernel";
  EXPECT_EQ(m[2].first, 1u);
  EXPECT_EQ(m[2].second, MatchMethod::kValue);  // not a name match
  EXPECT_FALSE(m.count(1));
}

TEST(AlignProvenance, ScopeInAnotherPhaseOrOnOneSideChangesNothing) {
  TraceBuilder ta0("a"), tb0("b");
  BuildFusedCase(&ta0, &tb0);
  Trace a0 = ta0.Build(), b0 = tb0.Build();
  const Alignment none = Align(a0, b0);
  for (const KernelPair& p : none.pairs) EXPECT_FALSE(p.a == 2 && p.b == 1) << "without scopes nothing pairs them";
  for (int variant = 0; variant < 2; ++variant) {
    TraceBuilder ta("a"), tb("b");
    BuildFusedCase(&ta, &tb);
    Trace a = ta.Build(), b = tb.Build();
    SetWhere(&a, 1, "fc1", Phase::kForward);
    SetWhere(&a, 2, "fc2", Phase::kForward);
    if (variant == 1) SetWhere(&b, 1, "fc2", Phase::kBackward);  // same module, other phase
    const Alignment al = Align(a, b);
    ASSERT_EQ(al.pairs.size(), none.pairs.size()) << variant;
    for (size_t i = 0; i < al.pairs.size(); ++i) {
      EXPECT_EQ(al.pairs[i].a, none.pairs[i].a);
      EXPECT_EQ(al.pairs[i].b, none.pairs[i].b);
      EXPECT_EQ(al.pairs[i].method, none.pairs[i].method);
    }
  }
}

}  // namespace
}  // namespace numtrace::analyzer

namespace numtrace::analyzer {
namespace {

// Issue 24: an operator-level trace never pairs with a kernel-level one
// without saying so; two traces at the same level (or without the field,
// which is kernel level) say nothing.
TEST(AlignLevels, OperatorAgainstKernelLevelIsSaid) {
  testing::TraceBuilder ta("a"), tb("b"), tc("c");
  ta.Add("aten::addmm");
  tb.Add("aten::addmm");
  tc.Add("aten::addmm");
  ta.trace().header.capture.emplace().level = CaptureLevel::kOps;
  tc.trace().header.capture.emplace().level = CaptureLevel::kOps;
  Trace a = ta.Build(), b = tb.Build(), c = tc.Build();
  const Alignment mixed = Align(a, b);
  ASSERT_EQ(mixed.warnings.size(), 1u);
  EXPECT_NE(mixed.warnings[0].find("A was captured at ops level, B at kernels level"), std::string::npos)
      << mixed.warnings[0];
  EXPECT_TRUE(Align(a, c).warnings.empty());
  EXPECT_TRUE(Align(b, b).warnings.empty());
}

}  // namespace
}  // namespace numtrace::analyzer

namespace numtrace::analyzer {
namespace {

// Issue 24: an operator whose output changed shape (a loss broadcast to
// (4, 4, 8) by a mis-shaped target) pairs with its counterpart when both
// read the same values; the same op reading other values does not.
TEST(AlignLevels, AnOpOfAnotherShapeThatReadTheSameValuesPairs) {
  testing::TraceBuilder ta("a"), tb("b");
  auto in = [](uint64_t content, uint64_t n) {
    Buffer b = Out(content, n);
    b.role = Role::kIn;
    return b;
  };
  for (testing::TraceBuilder* t : {&ta, &tb}) t->AddOp("aten::randn", {Out(1, 32)});
  ta.AddOp("aten::sub", {in(1, 32), in(2, 32), Out(3, 32)});
  tb.AddOp("aten::sub", {in(1, 32), in(2, 32), Out(4, 128)});
  ta.AddOp("aten::pow", {in(3, 32), Out(5, 32)});
  tb.AddOp("aten::pow", {in(4, 128), Out(6, 128)});
  Trace a = ta.Build(), b = tb.Build();
  const auto m = PairMap(Align(a, b), a, b);
  ASSERT_TRUE(m.count(1));
  EXPECT_EQ(m.at(1).first, 1u);  // sub with sub
  EXPECT_FALSE(m.count(2));      // pow read other values: nothing says it is the same call
}

// Issue 24: the same op in the same module writing the same shape in
// another dtype (q @ k.T run in bf16) pairs with its counterpart, though
// B's casts of the same module are in the way; in another module it does
// not.
TEST(AlignLevels, AnOpOfAnotherDtypeInTheSameModulePairs) {
  auto run = [](std::string_view name, const std::vector<std::string_view>& ops, DType dtype,
                std::string_view scope) {
    testing::TraceBuilder t{std::string(name)};
    Trace& tr = t.trace();
    for (size_t i = 0; i < ops.size(); ++i) {
      Buffer in = Out(100 + i, 32, dtype);
      in.role = Role::kIn;
      Buffer out = Out((dtype == DType::kF32 ? 200 : 300) + i, 32, dtype);
      out.shape = tr.strings.Intern("[4,8]");
      const uint32_t k = t.AddOp(ops[i], {in, out}, Phase::kForward);
      KernelProvenance p = tr.provenance[k];
      p.scope = tr.strings.Intern(scope);
      tr.SetProvenance(k, p);
    }
    return t.Build();
  };
  const std::vector<std::string_view> ops_a = {"aten::transpose", "aten::bmm"};
  const std::vector<std::string_view> ops_b = {"aten::_to_copy", "aten::transpose", "aten::bmm", "aten::_to_copy"};
  Trace a = run("a", ops_a, DType::kF32, "attn"), b = run("b", ops_b, DType::kBF16, "attn");
  Trace c = run("c", ops_b, DType::kBF16, "mlp");
  auto m = PairMap(Align(a, b), a, b);
  ASSERT_TRUE(m.count(0) && m.count(1));
  EXPECT_EQ(m.at(0).first, 1u);  // transpose with transpose
  EXPECT_EQ(m.at(1).first, 2u);  // bmm with bmm, not with the cast after it
  auto mc = PairMap(Align(a, c), a, c);
  EXPECT_FALSE(mc.count(0) && mc.at(0).first == 1u);
}

// A DebugMode log: `backward` ops without a module (as compile logs its
// backward), then AdamW's hash-only in-place ops for each parameter value
// in `params` (weight decay, then the update reading its output).
Trace OptimizerLog(int backward, const std::vector<double>& params) {
  std::string log = "Total captured activations: 0\n" + std::string(80, '=') + "\n\n";
  int n = 0;
  auto block = [&](const std::string& op, double out, const std::string& in, const char* extra = "") {
    char text[256];
    std::snprintf(text, sizeof text, "[<none>/op_%d_%s]\n  Output hash: %.6e\n  Input hashes: %s\n%s  Location: x.py:1\n\n",
                  n++, op.c_str(), out, in.c_str(), extra);
    log += text;
  };
  for (int i = 0; i < backward; ++i) block("mm", 7.0 + i, "1.000000e+00", "  Phase: backward\n");
  for (double p : params) {
    char in[32];
    std::snprintf(in, sizeof in, "%.6e", p);
    block("mul_", p * 0.5, in);
    std::snprintf(in, sizeof in, "%.6e", p * 0.5);
    block("addcdiv_", p * 0.25, in);
  }
  absl::StatusOr<Trace> t = ReadTraceBytes(log, "rank_0_activations.log", FindImporter("debugmode-log"));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace{};
}

TEST(AlignUpdateChains, OptimizerOpsAreNamedByTheirChainWhenBothLogsHoldTheSameChains) {
  // B: other values and two more backward ops, so its counters are shifted:
  // A's parameter 1 ops are op_3_mul_ and op_4_addcdiv_, B's parameter 0 ops.
  const Trace a = OptimizerLog(1, {3.0, 5.0}), b = OptimizerLog(3, {3.1, 5.1});
  std::vector<KernelKeys> ka = ComputeKernelKeys(a), kb = ComputeKernelKeys(b);
  const std::vector<KernelKeys> plain_a = ka;
  EXPECT_EQ(ka[3].level[kKeyName], kb[3].level[kKeyName]);  // the counter's coincidence
  AddUpdateChainKeys(a, &ka, b, &kb);
  EXPECT_NE(ka[3].level[kKeyName], kb[3].level[kKeyName]);
  EXPECT_EQ(ka[1].level[kKeyName], kb[3].level[kKeyName]);  // parameter 0's mul_ in both
  EXPECT_EQ(ka[4].level[kKeyName], kb[6].level[kKeyName]);  // parameter 1's addcdiv_
  EXPECT_EQ(ka[0].level[kKeyName], plain_a[0].level[kKeyName]);  // no chain: unchanged
  size_t optimizer_pairs = 0;
  for (const KernelPair& p : Align(a, b).pairs) {
    if (p.a == 0) continue;  // the backward op
    ++optimizer_pairs;
    EXPECT_EQ(p.b, p.a + 2) << p.a;
  }
  EXPECT_EQ(optimizer_pairs, 4u);
}

TEST(AlignUpdateChains, DifferentChainsLeaveTheKeysAsTheyAre) {
  // B updates one parameter more, first: its chains are renumbered.
  const Trace a = OptimizerLog(1, {3.0, 5.0}), b = OptimizerLog(1, {2.0, 3.0, 5.0});
  std::vector<KernelKeys> ka = ComputeKernelKeys(a), kb = ComputeKernelKeys(b);
  const std::vector<KernelKeys> plain_a = ka, plain_b = kb;
  AddUpdateChainKeys(a, &ka, b, &kb);
  for (size_t i = 0; i < ka.size(); ++i) EXPECT_EQ(ka[i].level[kKeyName], plain_a[i].level[kKeyName]);
  for (size_t i = 0; i < kb.size(); ++i) EXPECT_EQ(kb[i].level[kKeyName], plain_b[i].level[kKeyName]);
}

}  // namespace
}  // namespace numtrace::analyzer
