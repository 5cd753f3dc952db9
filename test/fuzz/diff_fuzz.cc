// File: test/fuzz/diff_fuzz.cc
//
// libFuzzer target for the whole diff after reading: any two traces the
// readers accept must align, be judged and be rendered (JSON summary,
// terminal summary, HTML report) without a crash, a sanitizer report or a
// hang, and the alignment must keep the invariants later stages rely on.
// The input is trace A, optionally followed by "\n----\n" and trace B (B = A
// otherwise); each may be of any format read/importer.h reads.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analyzer/align/aligner.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/step_finder.h"
#include "analyzer/read/input.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_summary.h"
#include "analyzer/report/terminal_summary.h"

namespace {

using namespace numtrace::analyzer;

absl::StatusOr<Trace> Read(std::string_view bytes, std::string_view path) {
  return ReadTraceBytes(bytes, path);
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t split = all.find("\n----\n");
  std::string_view text_a = all.substr(0, split);
  std::string_view text_b = split == std::string_view::npos ? text_a : all.substr(split + 6);
  absl::StatusOr<Trace> a = Read(text_a, "a/rank_0.ntrace.jsonl");
  absl::StatusOr<Trace> b = Read(text_b, "b/rank_0.ntrace.jsonl");
  if (!a.ok() || !b.ok()) return 0;

  DiffResult r = Judge(*a, *b, Align(*a, *b));
  r.steps = FindSteps(*a, *b);  // watch mode's step finder, rendered below with the rest
  const Alignment& al = r.alignment;
  Check(r.verdicts.size() == al.pairs.size());
  Check(al.pairs.size() + al.only_a.size() == a->kernels.size());
  Check(al.pairs.size() + al.only_b.size() == b->kernels.size());
  for (size_t i = 0; i < al.pairs.size(); ++i) {
    Check(al.pairs[i].a < a->kernels.size() && al.pairs[i].b < b->kernels.size());
    if (i > 0) Check(al.pairs[i - 1].a < al.pairs[i].a);
  }
  if (r.first_divergence) Check(*r.first_divergence < al.pairs.size());

  DiffReport report;
  report.path_a = "a";
  report.path_b = "b";
  report.ranks.push_back({0, &*a, &*b, &r});
  Check(!JsonSummary(report).empty());
  Check(!TerminalSummary(report, {}).empty());
  Check(!HtmlReport(report, {}).empty());
  return 0;
}
