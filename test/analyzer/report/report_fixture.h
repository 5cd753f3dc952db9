// File: test/analyzer/report/report_fixture.h
//
// Builds small traces and diff results directly (no reader, aligner or
// judge), so the report tests pin the reports' own behaviour.
//
// Example:
//   ReportFixture f;
//   f.AddPair("gemm", "gemm", PairStatus::kDiverged, 3e-3);
//   f.Finish();                      // counts, verdict, first divergence
//   std::string json = JsonSummary(f.Report());
#ifndef NUMTRACE_TEST_ANALYZER_REPORT_REPORT_FIXTURE_H_
#define NUMTRACE_TEST_ANALYZER_REPORT_REPORT_FIXTURE_H_

#include <memory>
#include <string>

#include "analyzer/judge/judge.h"
#include "analyzer/judge/origins.h"
#include "analyzer/report/rank_diff.h"

namespace numtrace::analyzer::testing {

class RankFixture {
 public:
  RankFixture(int64_t rank, std::string path_a, std::string path_b) : rank_(rank) {
    a_.path = std::move(path_a);
    b_.path = std::move(path_b);
    a_.label = "A";
    b_.label = "B";
    a_.rank = b_.rank = rank;
  }

  // Adds one kernel to a trace with one output buffer (arg 1, f32).
  static uint32_t AddKernel(Trace* t, std::string_view name, double sum, uint64_t nan = 0) {
    Kernel k;
    k.seq = t->kernels.size();
    k.launch = 1000 + k.seq;
    k.name = t->strings.Intern(name);
    k.demangled = k.name;
    k.stream = 7;
    k.grid[0] = 128; k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256; k.block[1] = k.block[2] = 1;
    k.first_buffer = static_cast<uint32_t>(t->buffers.size());
    k.buffer_count = 1;
    Buffer b;
    b.arg = 1;
    b.addr = 0x7f0000000000 + k.seq * 0x10000;  // each kernel its own fresh buffer
    b.bytes = 4096;
    b.dtype = DType::kF32;
    b.role = Role::kOut;
    b.stats.n = 1024;
    b.stats.nan = nan;
    b.stats.has_range = true;
    b.stats.min = -1;
    b.stats.max = 1;
    b.stats.sum = sum;
    b.stats.l1 = 512;
    b.stats.l2 = 16;
    b.stats.hash = 0x9f3a5c0d12e4b788ULL + static_cast<uint64_t>(sum * 1e9);
    t->buffers.push_back(b);
    t->kernels.push_back(k);
    return static_cast<uint32_t>(t->kernels.size() - 1);
  }

  void AddPair(std::string_view name_a, std::string_view name_b, PairStatus status, double rel,
               MatchMethod method = MatchMethod::kExact, uint64_t nan_b = 0) {
    uint32_t ia = AddKernel(&a_, name_a, 1.0);
    uint32_t ib = AddKernel(&b_, name_b, status == PairStatus::kBitwiseEqual ? 1.0 : 1.0 + rel, nan_b);
    r_.alignment.pairs.push_back({ia, ib, method});
    PairVerdict v;
    v.status = status;
    v.rel_diff = rel;
    v.score = status == PairStatus::kBitwiseEqual ? 0 : rel / 1e-5;  // as if the rule were rtol 1e-5
    v.a_buffer = v.b_buffer = 0;
    r_.verdicts.push_back(v);
    if (nan_b && !r_.first_nonfinite_b) r_.first_nonfinite_b = ib;
  }
  // A pair whose kernels write `out_addr` and, when in_addr != 0, read
  // in_addr holding contents `in_a` in A and `in_b` in B (data flow for the
  // origin analysis: the kernel that last wrote in_addr produced it).
  void AddFlowPair(std::string_view name, PairStatus status, double rel, uint64_t out_addr,
                   uint64_t in_addr = 0, uint64_t in_a = 0, uint64_t in_b = 0) {
    AddPair(name, name, status, rel);
    for (auto [t, content] : {std::pair{&a_, in_a}, std::pair{&b_, in_b}}) {
      t->buffers.back().addr = out_addr;
      if (in_addr == 0) continue;
      Buffer in = t->buffers.back();
      in.arg = 2;
      in.addr = in_addr;
      in.role = Role::kIn;
      in.stats.hash = content;
      t->buffers.push_back(in);
      t->kernels.back().buffer_count++;
    }
  }
  void AddOnlyA(std::string_view name) { r_.alignment.only_a.push_back(AddKernel(&a_, name, 1)); }
  void AddOnlyB(std::string_view name) { r_.alignment.only_b.push_back(AddKernel(&b_, name, 1)); }

  // Fills counts, verdict, first divergence and top list from the pairs with
  // judge/'s own roll-up (every divergence in the top list), then causes and
  // origins (the fixture's kernels read nothing: every difference is an
  // origin unless a test adds reads).
  void Finish() {
    TallyVerdicts(&r_, r_.verdicts.size());
    AnalyzeOrigins(a_, b_, 10, &r_);
  }

  Trace& a() { return a_; }
  Trace& b() { return b_; }
  DiffResult& result() { return r_; }
  RankDiff Diff() const { return {rank_, &a_, &b_, &r_}; }

 private:
  int64_t rank_;
  Trace a_, b_;
  DiffResult r_;
};

}  // namespace numtrace::analyzer::testing

#endif  // NUMTRACE_TEST_ANALYZER_REPORT_REPORT_FIXTURE_H_
