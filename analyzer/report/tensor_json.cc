// The JSON tensor diff summary (docs/format.md section 6).
#include <cmath>
#include <cstdio>

#include "analyzer/report/tensor_report.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {
namespace {

void Side(const std::string& path, const std::optional<uint64_t>& seq, const std::string& name, JsonWriter& w) {
  w.BeginObject().Key("path").String(path).Key("seq");
  seq ? w.Uint(*seq) : w.Null();
  w.Key("name").String(name).EndObject();
}

void Index(const std::optional<ElementAt>& at, JsonWriter& w) { at ? w.Uint(at->index) : w.Null(); }

// Non-finite values are written as null.
void Values(const std::optional<ElementAt>& at, JsonWriter& w) {
  if (!at) {
    w.Null();
    return;
  }
  w.BeginArray().Double(at->a).Double(at->b).EndArray();
}

void Indices(const std::vector<uint64_t>& v, JsonWriter& w) {
  w.BeginArray();
  for (uint64_t i : v) w.Uint(i);
  w.EndArray();
}

void Buffer(const TensorPair& p, JsonWriter& w) {
  const BufferComparison& c = p.cmp;
  w.BeginObject().Key("arg").Uint(p.arg).Key("nth").Uint(p.nth).Key("role").String(RoleName(p.role));
  w.Key("when").String(p.when).Key("dtype").String(DTypeName(p.dtype)).Key("n").Uint(c.n);
  if (c.sizes_differ()) w.Key("n_a").Uint(c.n_a).Key("n_b").Uint(c.n_b);
  w.Key("equal").Uint(c.equal).Key("mismatched").Uint(c.mismatched);
  w.Key("max_abs").Double(c.max_abs_value).Key("max_abs_index");
  Index(c.max_abs, w);
  w.Key("max_abs_values");
  Values(c.max_abs, w);
  w.Key("max_rel").Double(c.max_rel_value).Key("max_rel_index");
  Index(c.max_rel, w);
  w.Key("max_rel_values");
  Values(c.max_rel, w);
  w.Key("first_mismatch");
  Index(c.first_mismatch, w);
  w.Key("first_mismatch_values");
  Values(c.first_mismatch, w);
  w.Key("cosine").Double(c.cosine);
  if (c.has_ulp) {
    w.Key("ulp").BeginObject();
    for (int i = 0; i < kUlpBuckets; ++i) w.Key(kUlpBucketNames[i]).Uint(c.ulp[i]);
    w.EndObject().Key("max_ulp").Uint(c.max_ulp);
  }
  const NonfiniteSide &na = c.nonfinite_a, &nb = c.nonfinite_b;
  w.Key("nonfinite").BeginObject().Key("a").Uint(na.nan + na.inf).Key("b").Uint(nb.nan + nb.inf);
  w.Key("first_index_a");
  na.first_indices.empty() ? w.Null() : w.Uint(na.first_indices[0]);
  w.Key("first_index_b");
  nb.first_indices.empty() ? w.Null() : w.Uint(nb.first_indices[0]);
  w.Key("nan_a").Uint(na.nan).Key("nan_b").Uint(nb.nan).Key("indices_a");
  Indices(na.first_indices, w);
  w.Key("indices_b");
  Indices(nb.first_indices, w);
  w.EndObject().Key("file_a").String(p.file_a).Key("file_b").String(p.file_b).EndObject();
}

}  // namespace

std::string TensorValue(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string TensorPairName(const TensorPair& p) {
  std::string s = "arg " + std::to_string(p.arg);
  if (p.nth) s += " #" + std::to_string(p.nth);
  return s + " " + p.when;
}

std::string TensorJsonSummary(const TensorDiff& d) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("format").String(kTensorDiffFormatName).Key("version").Int(1).Key("a");
  Side(d.path_a, d.seq_a, d.name_a, w);
  w.Key("b");
  Side(d.path_b, d.seq_b, d.name_b, w);
  w.Key("tolerance").BeginObject().Key("rtol").Double(d.tolerance.rtol).Key("atol").Double(d.tolerance.atol);
  w.EndObject().Key("verdict").String(VerdictName(d.verdict)).Key("buffers").BeginArray();
  for (const TensorPair& p : d.pairs) Buffer(p, w);
  w.EndArray().Key("warnings").BeginArray();
  for (const std::string& warning : d.warnings) w.String(warning);
  w.EndArray().EndObject();
  out += "\n";
  return out;
}

}  // namespace numtrace::analyzer
