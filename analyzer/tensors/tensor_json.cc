// The JSON tensor diff summary (docs/format.md section 6).
#include <cmath>

#include "analyzer/tensors/tensor_report.h"
#include "common/format/jsonl_writer.h"

namespace numtrace::analyzer {
namespace {

void U(uint64_t v, std::string* out) { out->append(std::to_string(v)); }

void Side(const std::string& path, const std::optional<uint64_t>& seq, const std::string& name,
          std::string* out) {
  out->append("{\"path\":");
  AppendJsonString(path, out);
  out->append(",\"seq\":");
  if (seq) U(*seq, out); else out->append("null");
  out->append(",\"name\":");
  AppendJsonString(name, out);
  out->push_back('}');
}

void Index(const std::optional<ElementAt>& at, std::string* out) {
  if (at) U(at->index, out); else out->append("null");
}

void Values(const std::optional<ElementAt>& at, std::string* out) {
  if (!at) {
    out->append("null");
    return;
  }
  out->push_back('[');
  AppendJsonDouble(at->a, out);  // non-finite values are written as null
  out->push_back(',');
  AppendJsonDouble(at->b, out);
  out->push_back(']');
}

void Indices(const std::vector<uint64_t>& v, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    U(v[i], out);
  }
  out->push_back(']');
}

void Buffer(const TensorPair& p, std::string* out) {
  const BufferComparison& c = p.cmp;
  out->append("{\"arg\":");
  U(p.arg, out);
  out->append(",\"nth\":");
  U(p.nth, out);
  out->append(",\"role\":");
  AppendJsonString(RoleName(p.role), out);
  out->append(",\"when\":");
  AppendJsonString(p.when, out);
  out->append(",\"dtype\":");
  AppendJsonString(DTypeName(p.dtype), out);
  out->append(",\"n\":");
  U(c.n, out);
  if (c.sizes_differ()) {
    out->append(",\"n_a\":");
    U(c.n_a, out);
    out->append(",\"n_b\":");
    U(c.n_b, out);
  }
  out->append(",\"equal\":");
  U(c.equal, out);
  out->append(",\"mismatched\":");
  U(c.mismatched, out);
  out->append(",\"max_abs\":");
  AppendJsonDouble(c.max_abs_value, out);
  out->append(",\"max_abs_index\":");
  Index(c.max_abs, out);
  out->append(",\"max_abs_values\":");
  Values(c.max_abs, out);
  out->append(",\"max_rel\":");
  AppendJsonDouble(c.max_rel_value, out);
  out->append(",\"max_rel_index\":");
  Index(c.max_rel, out);
  out->append(",\"max_rel_values\":");
  Values(c.max_rel, out);
  out->append(",\"first_mismatch\":");
  Index(c.first_mismatch, out);
  out->append(",\"first_mismatch_values\":");
  Values(c.first_mismatch, out);
  out->append(",\"cosine\":");
  AppendJsonDouble(c.cosine, out);
  if (c.has_ulp) {
    out->append(",\"ulp\":{");
    for (int i = 0; i < kUlpBuckets; ++i) {
      if (i) out->push_back(',');
      AppendJsonString(kUlpBucketNames[i], out);
      out->push_back(':');
      U(c.ulp[i], out);
    }
    out->append("},\"max_ulp\":");
    U(c.max_ulp, out);
  }
  const NonfiniteSide &na = c.nonfinite_a, &nb = c.nonfinite_b;
  out->append(",\"nonfinite\":{\"a\":");
  U(na.nan + na.inf, out);
  out->append(",\"b\":");
  U(nb.nan + nb.inf, out);
  out->append(",\"first_index_a\":");
  if (na.first_indices.empty()) out->append("null"); else U(na.first_indices[0], out);
  out->append(",\"first_index_b\":");
  if (nb.first_indices.empty()) out->append("null"); else U(nb.first_indices[0], out);
  out->append(",\"nan_a\":");
  U(na.nan, out);
  out->append(",\"nan_b\":");
  U(nb.nan, out);
  out->append(",\"indices_a\":");
  Indices(na.first_indices, out);
  out->append(",\"indices_b\":");
  Indices(nb.first_indices, out);
  out->append("},\"file_a\":");
  AppendJsonString(p.file_a, out);
  out->append(",\"file_b\":");
  AppendJsonString(p.file_b, out);
  out->push_back('}');
}

}  // namespace

std::string TensorPairName(const TensorPair& p) {
  std::string s = "arg " + std::to_string(p.arg);
  if (p.nth) s += " #" + std::to_string(p.nth);
  return s + " " + p.when;
}

std::string TensorJsonSummary(const TensorDiff& d) {
  std::string out = "{\"format\":";
  AppendJsonString(kTensorDiffFormatName, &out);
  out.append(",\"version\":1,\"a\":");
  Side(d.path_a, d.seq_a, d.name_a, &out);
  out.append(",\"b\":");
  Side(d.path_b, d.seq_b, d.name_b, &out);
  out.append(",\"tolerance\":{\"rtol\":");
  AppendJsonDouble(d.tolerance.rtol, &out);
  out.append(",\"atol\":");
  AppendJsonDouble(d.tolerance.atol, &out);
  out.append("},\"verdict\":");
  AppendJsonString(VerdictName(d.verdict), &out);
  out.append(",\"buffers\":[");
  for (size_t i = 0; i < d.pairs.size(); ++i) {
    if (i) out.push_back(',');
    Buffer(d.pairs[i], &out);
  }
  out.append("],\"warnings\":[");
  for (size_t i = 0; i < d.warnings.size(); ++i) {
    if (i) out.push_back(',');
    AppendJsonString(d.warnings[i], &out);
  }
  out.append("]}\n");
  return out;
}

}  // namespace numtrace::analyzer
