// The terminal summary of `numtrace-diff --tensors`.
#include <cmath>
#include <cstdio>

#include "analyzer/report/tensor_report.h"

namespace numtrace::analyzer {
namespace {

constexpr std::string_view kRed = "\033[31m", kGreen = "\033[32m", kYellow = "\033[33m",
                           kBold = "\033[1m", kReset = "\033[0m";

std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string At(const ElementAt& e) {
  return "[" + std::to_string(e.index) + "]: A " + TensorValue(e.a) + ", B " + TensorValue(e.b);
}

std::string Indices(const NonfiniteSide& s) {
  std::string out = std::to_string(s.nan) + " NaN, " + std::to_string(s.inf) + " Inf";
  if (s.first_indices.empty()) return out;
  out += " at [";
  for (size_t i = 0; i < s.first_indices.size(); ++i) out += (i ? ", " : "") + std::to_string(s.first_indices[i]);
  return out + (s.nan + s.inf > s.first_indices.size() ? ", ...]" : "]");
}

}  // namespace

std::string TensorTerminalSummary(const TensorDiff& d, bool color) {
  auto c = [&](std::string_view code, const std::string& text) {
    return color ? std::string(code) + text + std::string(kReset) : text;
  };
  std::string out = "numtrace-diff --tensors: ";
  const std::string_view vc =
      d.verdict == Verdict::kDiverged ? kRed : d.verdict == Verdict::kWithinTolerance ? kYellow : kGreen;
  out += c(std::string(vc) + std::string(kBold), std::string(VerdictName(d.verdict))) + "\n";
  auto side = [&](const char* label, const std::string& path, const std::optional<uint64_t>& seq,
                  const std::string& name) {
    out += std::string("  ") + label + ": " + path;
    if (seq) out += "  seq " + std::to_string(*seq);
    if (!name.empty()) out += "  " + name;
    out += "\n";
  };
  side("A", d.path_a, d.seq_a, d.name_a);
  side("B", d.path_b, d.seq_b, d.name_b);
  out += "  tolerance: rtol " + Short(d.tolerance.rtol) + ", atol " + Short(d.tolerance.atol) + "\n";
  for (const std::string& w : d.warnings) out += c(kYellow, "  warning: ") + w + "\n";
  for (const TensorPair& p : d.pairs) {
    const BufferComparison& m = p.cmp;
    out += "  " + c(kBold, TensorPairName(p)) + " (" + std::string(RoleName(p.role)) + ", " +
           std::string(DTypeName(p.dtype)) + "[" + std::to_string(m.n) + "]): ";
    if (m.identical()) {
      out += "bitwise equal\n";
      continue;
    }
    out += (m.mismatched ? c(kRed, std::to_string(m.mismatched) + " mismatched") : "0 mismatched") + ", " +
           std::to_string(m.equal) + " equal, cosine " + TensorValue(m.cosine) + "\n";
    if (m.first_mismatch) out += "    first mismatch " + At(*m.first_mismatch) + "\n";
    if (m.max_abs) out += "    max abs err " + TensorValue(m.max_abs_value) + " at " + At(*m.max_abs) + "\n";
    if (m.max_rel) out += "    max rel err " + TensorValue(m.max_rel_value) + " at " + At(*m.max_rel) + "\n";
    if (m.has_ulp) {
      out += "    ulp:";
      for (int i = 0; i < kUlpBuckets; ++i) {
        out += " " + std::string(kUlpBucketNames[i]) + ":" + std::to_string(m.ulp[i]);
      }
      out += "  (max " + std::to_string(m.max_ulp) + ")\n";
    }
    if (m.nonfinite_a.nan + m.nonfinite_a.inf + m.nonfinite_b.nan + m.nonfinite_b.inf > 0) {
      out += "    NaN/Inf: A " + Indices(m.nonfinite_a) + "; B " + Indices(m.nonfinite_b) + "\n";
    }
  }
  return out;
}

}  // namespace numtrace::analyzer
