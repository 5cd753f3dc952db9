#include "analyzer/tensors/tensor_diff.h"

#include <algorithm>

namespace numtrace::analyzer {
namespace {

std::string Key(const DumpArray& x) {
  std::string k = "arg " + std::to_string(x.arg);
  if (x.nth) k += " #" + std::to_string(x.nth);
  return k + " " + x.when;
}

}  // namespace

TensorDiff DiffDumps(const DumpSide& a, const DumpSide& b, const ElementTolerance& tolerance) {
  TensorDiff d;
  d.path_a = a.path;
  d.path_b = b.path;
  d.seq_a = a.seq;
  d.seq_b = b.seq;
  d.name_a = a.name;
  d.name_b = b.name;
  d.tolerance = tolerance;
  for (const std::string& w : a.warnings) d.warnings.push_back(w);
  for (const std::string& w : b.warnings) d.warnings.push_back(w);
  if (!a.name.empty() && !b.name.empty() && a.name != b.name) {
    d.warnings.push_back("the dumps are of different kernels: A " + a.name + ", B " + b.name);
  }
  bool unpaired = false;
  std::vector<bool> used_b(b.arrays.size(), false);
  for (const DumpArray& x : a.arrays) {
    auto it = std::find_if(b.arrays.begin(), b.arrays.end(), [&](const DumpArray& y) {
      return y.arg == x.arg && y.nth == x.nth && y.when == x.when;
    });
    if (it == b.arrays.end()) {
      d.warnings.push_back(Key(x) + " is only in A (" + x.file + ")");
      unpaired = true;
      continue;
    }
    used_b[it - b.arrays.begin()] = true;
    TensorPair p;
    p.arg = x.arg;
    p.nth = x.nth;
    p.role = x.role;
    p.when = x.when;
    p.dtype = x.dtype;
    p.file_a = x.file;
    p.file_b = it->file;
    if (it->dtype != x.dtype) {
      d.warnings.push_back(Key(x) + ": A holds " + std::string(DTypeName(x.dtype)) + ", B " +
                           std::string(DTypeName(it->dtype)) + "; compared as A's dtype");
    }
    p.cmp = CompareElements(x.data, it->data, x.dtype, tolerance);
    if (p.cmp.sizes_differ()) {
      d.warnings.push_back(Key(x) + ": A has " + std::to_string(p.cmp.n_a) + " elements, B " +
                           std::to_string(p.cmp.n_b) + "; the first " + std::to_string(p.cmp.n) + " compared");
    }
    d.pairs.push_back(std::move(p));
  }
  for (size_t i = 0; i < b.arrays.size(); ++i) {
    if (used_b[i]) continue;
    d.warnings.push_back(Key(b.arrays[i]) + " is only in B (" + b.arrays[i].file + ")");
    unpaired = true;
  }
  bool all_equal = !unpaired, diverged = unpaired;
  for (const TensorPair& p : d.pairs) {
    if (!p.cmp.identical()) all_equal = false;
    if (p.cmp.mismatched > 0 || p.cmp.sizes_differ()) diverged = true;
  }
  d.verdict = diverged ? Verdict::kDiverged : all_equal ? Verdict::kIdentical : Verdict::kWithinTolerance;
  return d;
}

}  // namespace numtrace::analyzer
