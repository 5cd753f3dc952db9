#include "analyzer/align/aligner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analyzer/align/kernel_keys.h"

namespace numtrace::analyzer {
namespace {

// Leaf scores: how strongly two kernels look like the same launch. The name
// part and the value part add up, so a same-name pair with equal output wins
// over either alone.
constexpr int kScoreNameLayout = 100;
constexpr int kScoreName = 80;
constexpr int kScoreNormalizedLayout = 70;
constexpr int kScoreNormalized = 50;
constexpr int kScoreFamilyLayout = 40;
constexpr int kScoreFamily = 30;
constexpr int kScoreEqualOutput = 35;
constexpr int kScoreCloseOutput = 10;
constexpr double kCloseStats = 0.05;  // relative, for "close stats" value matches
// Same module scope and phase on both sides (trace provenance): evidence for a
// pair on its own (a fused Triton kernel of a module against that module's
// eager kernels), below any name agreement; nothing when either lacks a scope.
constexpr int kScoreSameScope = 20;

struct Side {
  const Trace* trace = nullptr;
  std::vector<KernelKeys> keys;  // by kernel index
  std::vector<uint32_t> seq;     // kernel indices taking part (overrides removed)
};

struct Task {
  uint32_t a0, a1, b0, b1;
  int level;
};

// What the leaf score reads of one kernel, gathered once per window so the
// 64x64 score loop touches no trace data.
// Copies, not pointers: the score loop reads one small contiguous record
// per side instead of chasing into the keys and the buffers.
struct Candidate {
  uint64_t level[kKeyLevelCount];  // KernelKeys::level
  uint64_t primary_hash = 0;
  bool has_primary = false;  // the kernel has a primary output
  // The primary output's statistics, for CloseOutputs; `closable` when there
  // is one with a known dtype and elements (else it is close to nothing).
  bool closable = false;
  DType dtype = DType::kRaw;
  uint64_t n = 0;
  double l1 = 0, l2 = 0, sum = 0;
  uint64_t where = 0;  // hash of scope and phase; 0 when the kernel has no scope
  // Operator records: the op's name and phase without its layout, the
  // hashes of what it read in order, and its primary output's shape (0 for
  // kernels and when unknown).
  uint64_t op = 0, op_inputs = 0, op_shape = 0;
};

// Comparable across traces (their string pools differ): a hash of the text.
uint64_t WhereKey(const Trace& t, const Kernel& k) {
  const std::optional<std::string_view> scope = t.Scope(k);
  if (!scope) return 0;
  uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(t.PhaseOf(k));
  for (unsigned char c : *scope) h = (h ^ c) * 0x100000001b3ull;
  return h | 1;
}
int ScopeBonus(const Candidate& a, const Candidate& b) {
  return a.where != 0 && a.where == b.where ? kScoreSameScope : 0;
}

bool CloseOutputs(const Candidate& u, const Candidate& v);
int ScoreOf(const Candidate& a, const Candidate& b);
void NoPairsAwayFromTwins(const std::vector<Candidate>& rows, const std::vector<Candidate>& cols,
                          std::vector<int>* score);

class AlignerImpl {
 public:
  AlignerImpl(const Trace& a, const Trace& b, const AlignOptions& options) : options_(options) {
    a_.trace = &a;
    b_.trace = &b;
    a_.keys = ComputeKernelKeys(a);
    b_.keys = ComputeKernelKeys(b);
    AddUpdateChainKeys(a, &a_.keys, b, &b_.keys);
  }

  Alignment Run();

 private:
  const KernelKeys& KA(uint32_t pos) const { return a_.keys[a_.seq[pos]]; }
  const KernelKeys& KB(uint32_t pos) const { return b_.keys[b_.seq[pos]]; }

  void ApplyOverrides(std::vector<KernelPair>* forced);
  void Solve(Task root);
  bool Anchor(const Task& t, std::vector<Task>* stack);
  void DropStrayContentAnchors(const Task& t, const std::vector<std::pair<uint32_t, uint32_t>>& cand,
                               std::vector<uint32_t>* chain) const;
  void Leaf(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1);
  void DynamicLeaf(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1);
  void MatchWindow(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1,
                   std::vector<std::pair<uint32_t, uint32_t>>* picked, std::vector<bool>* by_name) const;
  void GreedyLeaf(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1);
  Candidate CandidateA(uint32_t pa) const;
  Candidate CandidateB(uint32_t pb) const;
  void Pair(uint32_t pa, uint32_t pb, bool by_name);

  const AlignOptions& options_;
  Side a_, b_;
  Alignment result_;
};

void AlignerImpl::Pair(uint32_t pa, uint32_t pb, bool by_name) {
  MatchMethod m = MatchMethod::kValue;
  if (KA(pa).level[kKeyName] == KB(pb).level[kKeyName]) {
    m = MatchMethod::kExact;
  } else if (by_name) {
    m = MatchMethod::kFuzzy;
  }
  result_.pairs.push_back({a_.seq[pa], b_.seq[pb], m});
}

// Whether two primary outputs hold close statistics (a fused or re-ordered
// kernel computing the same values); false when either has none.
bool CloseOutputs(const Candidate& u, const Candidate& v) {
  if (!u.closable || !v.closable || u.dtype != v.dtype || u.n != v.n) return false;
  auto rel = [](double p, double q) {
    double s = std::max(std::fabs(p), std::fabs(q));
    return s == 0 ? 0.0 : std::fabs(p - q) / s;
  };
  double l1 = std::max(u.l1, v.l1);
  double dsum = l1 == 0 ? 0 : std::fabs(u.sum - v.sum) / l1;
  return rel(u.l2, v.l2) <= kCloseStats && rel(u.l1, v.l1) <= kCloseStats && dsum <= kCloseStats;
}

int ScoreOf(const Candidate& a, const Candidate& b) {
  const Candidate& x = a;
  const Candidate& y = b;
  int s = 0;
  if (x.level[kKeyNameLayout] == y.level[kKeyNameLayout]) s = kScoreNameLayout;
  else if (x.level[kKeyName] == y.level[kKeyName]) s = kScoreName;
  else if (x.level[kKeyNormalizedLayout] == y.level[kKeyNormalizedLayout]) s = kScoreNormalizedLayout;
  else if (x.level[kKeyNormalized] == y.level[kKeyNormalized]) s = kScoreNormalized;
  else if (x.level[kKeyFamilyLayout] == y.level[kKeyFamilyLayout]) s = kScoreFamilyLayout;
  else if (x.level[kKeyFamily] == y.level[kKeyFamily]) s = kScoreFamily;
  if (x.has_primary && y.has_primary && x.primary_hash == y.primary_hash) {
    s += kScoreEqualOutput;
  } else if (CloseOutputs(a, b)) {
    s += kScoreCloseOutput;
  }
  return s + ScopeBonus(a, b);
}

// Operators paired without a name in common (compiled logs have no module
// paths): one whose output has an exact twin on the other side of the
// window - the same op, moved, as compiled backward reorders its matmuls -
// is its twin's or no one's, never a partner with far-off values, which
// would be a false divergence. Only outputs with a size and dtype count:
// hash-only blocks share values by chance (every `step` is 1.0).
void NoPairsAwayFromTwins(const std::vector<Candidate>& rows, const std::vector<Candidate>& cols,
                          std::vector<int>* score) {
  auto hashes = [](const std::vector<Candidate>& side) {
    absl::flat_hash_set<uint64_t> out;
    for (const Candidate& c : side) {
      if (c.closable) out.insert(c.primary_hash);
    }
    return out;
  };
  const absl::flat_hash_set<uint64_t> in_rows = hashes(rows), in_cols = hashes(cols);
  const size_t nb = cols.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < nb; ++j) {
      int& s = (*score)[i * nb + j];
      const Candidate &u = rows[i], &v = cols[j];
      if (s <= 0 || s >= kScoreName || !u.closable || !v.closable || u.primary_hash == v.primary_hash ||
          CloseOutputs(u, v)) {
        continue;
      }
      if (in_cols.contains(u.primary_hash) || in_rows.contains(v.primary_hash)) s = 0;
    }
  }
}

Candidate MakeCandidate(const KernelKeys& k, const Trace& t, const Kernel& kernel) {
  Candidate c;
  std::copy(std::begin(k.level), std::end(k.level), c.level);
  c.has_primary = k.primary_output >= 0;
  c.primary_hash = k.primary_hash;
  if (c.has_primary) {
    const Buffer& b = t.BuffersOf(kernel)[k.primary_output];
    c.dtype = b.dtype;
    c.n = b.stats.n;
    c.l1 = b.stats.l1;
    c.l2 = b.stats.l2;
    c.sum = b.stats.sum;
    c.closable = b.dtype != DType::kRaw && b.stats.n != 0;
  }
  c.where = WhereKey(t, kernel);
  if (kernel.level == RecordLevel::kOp) {
    c.op = HashCombine(HashString(t.Name(kernel)), static_cast<uint64_t>(t.PhaseOf(kernel)));
    c.op_inputs = 0x6f70696eULL;
    for (const Buffer& buffer : t.BuffersOf(kernel)) {
      if (buffer.role == Role::kIn) c.op_inputs = HashCombine(c.op_inputs, buffer.stats.hash);
    }
    if (c.has_primary) {
      const StringId shape = t.BuffersOf(kernel)[k.primary_output].shape;
      if (shape != kNoString) c.op_shape = HashString(t.strings.View(shape));
    }
  }
  return c;
}

Candidate AlignerImpl::CandidateA(uint32_t pa) const {
  return MakeCandidate(KA(pa), *a_.trace, a_.trace->kernels[a_.seq[pa]]);
}

Candidate AlignerImpl::CandidateB(uint32_t pb) const {
  return MakeCandidate(KB(pb), *b_.trace, b_.trace->kernels[b_.seq[pb]]);
}

// Patience step: keys unique on both sides of the task become anchors (the
// longest subsequence in order on both sides); the gaps between them are
// pushed as new tasks that start again from the finest key. Returns false when
// the task has no anchor at its level.
bool AlignerImpl::Anchor(const Task& t, std::vector<Task>* stack) {
  struct Count {
    uint32_t na = 0, nb = 0, pa = 0, pb = 0;
  };
  absl::flat_hash_map<uint64_t, Count> counts;
  counts.reserve(std::min<size_t>(t.a1 - t.a0, 1 << 20));
  for (uint32_t i = t.a0; i < t.a1; ++i) {
    Count& c = counts[KA(i).level[t.level]];
    ++c.na;
    c.pa = i;
  }
  for (uint32_t j = t.b0; j < t.b1; ++j) {
    auto it = counts.find(KB(j).level[t.level]);
    if (it == counts.end()) continue;
    ++it->second.nb;
    it->second.pb = j;
  }
  std::vector<std::pair<uint32_t, uint32_t>> cand;  // (pa, pb) in a order
  for (uint32_t i = t.a0; i < t.a1; ++i) {
    const Count& c = counts.find(KA(i).level[t.level])->second;
    if (c.na == 1 && c.nb == 1) cand.emplace_back(i, c.pb);
  }
  if (cand.empty()) return false;
  // Longest increasing subsequence on pb (patience sorting with back links).
  std::vector<uint32_t> tails, prev(cand.size(), UINT32_MAX);
  for (uint32_t k = 0; k < cand.size(); ++k) {
    auto it = std::lower_bound(tails.begin(), tails.end(), cand[k].second,
                               [&](uint32_t idx, uint32_t pb) { return cand[idx].second < pb; });
    if (it != tails.begin()) prev[k] = *(it - 1);
    if (it == tails.end()) tails.push_back(k); else *it = k;
  }
  std::vector<uint32_t> chain;
  for (uint32_t k = tails.back(); k != UINT32_MAX; k = prev[k]) chain.push_back(k);
  std::reverse(chain.begin(), chain.end());
  if (t.level == kKeyNameLayoutContent) DropStrayContentAnchors(t, cand, &chain);
  if (chain.empty()) return false;
  uint32_t pa = t.a0, pb = t.b0;
  for (uint32_t k : chain) {
    auto [i, j] = cand[k];
    if (i > pa || j > pb) stack->push_back({pa, i, pb, j, 0});
    Pair(i, j, true);
    pa = i + 1;
    pb = j + 1;
  }
  if (pa < t.a1 || pb < t.b1) stack->push_back({pa, t.a1, pb, t.b1, 0});
  return true;
}

// Equal content is strong evidence, but a coincidence is possible - a scalar
// loss that repeats its value 200 steps later. Such an anchor shifts the
// alignment: it pairs step 211 of A with step 1 of B and strands every
// kernel in between (two 400-step runs of one program: 3,150 kernels
// unmatched on each side). Runs of the same program keep their offset (b - a)
// from anchor to anchor; an anchor whose offset differs from both neighbours
// while they agree with each other (the task's ends count as neighbours) is
// such a stray and is dropped - its kernels are paired by the coarser keys.
void AlignerImpl::DropStrayContentAnchors(const Task& t,
                                          const std::vector<std::pair<uint32_t, uint32_t>>& cand,
                                          std::vector<uint32_t>* chain) const {
  auto offset = [](int64_t a, int64_t b) { return b - a; };
  const int64_t start = offset(t.a0, t.b0), end = offset(t.a1, t.b1);
  std::vector<uint32_t> kept;
  kept.reserve(chain->size());
  for (size_t k = 0; k < chain->size(); ++k) {
    const auto [i, j] = cand[(*chain)[k]];
    const int64_t mine = offset(i, j);
    const int64_t before = kept.empty() ? start : offset(cand[kept.back()].first, cand[kept.back()].second);
    const int64_t after = k + 1 < chain->size()
                              ? offset(cand[(*chain)[k + 1]].first, cand[(*chain)[k + 1]].second)
                              : end;
    if (mine != before && mine != after && before == after) continue;
    kept.push_back((*chain)[k]);
  }
  chain->swap(kept);
}

void AlignerImpl::Solve(Task root) {
  std::vector<Task> stack{root};
  while (!stack.empty()) {
    Task t = stack.back();
    stack.pop_back();
    const int L = t.level;
    // Equal keys at both ends pair in order: this is what makes long runs of
    // one repeated kernel (hundreds of `add`s) cheap and right. Only for keys
    // holding the recorded name: a coarse key (family "gemm") would pair a
    // GEMM with the split-K or epilogue kernel before it; the leaf, which also
    // weighs content, decides those.
    while (L <= kKeyName && t.a0 < t.a1 && t.b0 < t.b1 && KA(t.a0).level[L] == KB(t.b0).level[L]) {
      Pair(t.a0++, t.b0++, true);
    }
    while (L <= kKeyName && t.a0 < t.a1 && t.b0 < t.b1 && KA(t.a1 - 1).level[L] == KB(t.b1 - 1).level[L]) {
      Pair(--t.a1, --t.b1, true);
    }
    if (t.a0 == t.a1 || t.b0 == t.b1) continue;
    if (Anchor(t, &stack)) continue;
    if (L + 1 < kKeyLevelCount) {
      stack.push_back({t.a0, t.a1, t.b0, t.b1, L + 1});
      continue;
    }
    Leaf(t.a0, t.a1, t.b0, t.b1);
  }
}

void AlignerImpl::Leaf(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1) {
  const uint32_t side = static_cast<uint32_t>(std::max(options_.max_dp_side, 1));
  if (a1 - a0 <= side && b1 - b0 <= side) {
    DynamicLeaf(a0, a1, b0, b1);
  } else {
    GreedyLeaf(a0, a1, b0, b1);
  }
}

// Maximum-weight order-preserving matching of a small window; pairs come
// out in order, with whether a name key (not content alone) made them.
void AlignerImpl::MatchWindow(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1,
                              std::vector<std::pair<uint32_t, uint32_t>>* picked,
                              std::vector<bool>* by_name) const {
  const uint32_t na = a1 - a0, nb = b1 - b0;
  std::vector<Candidate> rows(na), cols(nb);
  for (uint32_t i = 0; i < na; ++i) rows[i] = CandidateA(a0 + i);
  for (uint32_t j = 0; j < nb; ++j) cols[j] = CandidateB(b0 + j);
  std::vector<int> score(static_cast<size_t>(na) * nb);
  auto is_op = [](const Side& side, uint32_t pos) {
    return side.trace->kernels[side.seq[pos]].level == RecordLevel::kOp;
  };
  for (uint32_t i = 0; i < na; ++i) {
    const bool op_a = is_op(a_, a0 + i);
    for (uint32_t j = 0; j < nb; ++j) {
      int& s = score[i * nb + j];
      s = ScoreOf(rows[i], cols[j]);
      // Operators told apart by order and content only (no module path in
      // common, as under compile): a partner whose values are far off is a
      // weak candidate, so two swapped ops pair with their twins and leave
      // the rest unpaired instead of making a chain of wrong pairs.
      if (op_a && s > 0 && s < kScoreName && is_op(b_, b0 + j)) s = std::min(s, kScoreFamily);
      // The same op of another output shape or dtype (the keys all hold the
      // layout), a weak candidate when it read the same values (the op
      // whose arguments changed: a loss broadcast to (4, 4, 8) by a
      // mis-shaped target) or, in the same module, wrote the same shape
      // (another dtype: a matmul run in bf16).
      if (op_a && rows[i].op == cols[j].op &&
          (rows[i].op_inputs == cols[j].op_inputs ||
           (rows[i].op_shape != 0 && rows[i].op_shape == cols[j].op_shape && ScopeBonus(rows[i], cols[j]) > 0))) {
        s = std::max(s, kScoreFamily + ScopeBonus(rows[i], cols[j]));
      }
    }
  }
  if (is_op(a_, a0) && is_op(b_, b0)) NoPairsAwayFromTwins(rows, cols, &score);
  std::vector<int> dp(static_cast<size_t>(na + 1) * (nb + 1), 0);
  auto at = [&](uint32_t i, uint32_t j) -> int& { return dp[i * (nb + 1) + j]; };
  for (uint32_t i = 1; i <= na; ++i) {
    for (uint32_t j = 1; j <= nb; ++j) {
      int best = std::max(at(i - 1, j), at(i, j - 1));
      int s = score[(i - 1) * nb + (j - 1)];
      if (s > 0) best = std::max(best, at(i - 1, j - 1) + s);
      at(i, j) = best;
    }
  }
  std::vector<std::pair<uint32_t, uint32_t>> rev;
  for (uint32_t i = na, j = nb; i > 0 && j > 0;) {
    int s = score[(i - 1) * nb + (j - 1)];
    if (s > 0 && at(i, j) == at(i - 1, j - 1) + s) {
      rev.emplace_back(i - 1, j - 1);
      --i;
      --j;
    } else if (at(i, j) == at(i - 1, j)) {
      --i;
    } else {
      --j;
    }
  }
  for (auto it = rev.rbegin(); it != rev.rend(); ++it) {
    // The name part alone says whether a name made the pair.
    int s = score[it->first * nb + it->second] - ScopeBonus(rows[it->first], cols[it->second]);
    picked->emplace_back(a0 + it->first, b0 + it->second);
    by_name->push_back(s >= kScoreFamily && s != kScoreEqualOutput);
  }
}

void AlignerImpl::DynamicLeaf(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1) {
  std::vector<std::pair<uint32_t, uint32_t>> picked;
  std::vector<bool> by_name;
  MatchWindow(a0, a1, b0, b1, &picked, &by_name);
  for (size_t k = 0; k < picked.size(); ++k) Pair(picked[k].first, picked[k].second, by_name[k]);
}

// Large leaf with no anchor at any level: slide a max_dp_side window along
// both sides, solve it exactly and keep the pairs of its first half (at least
// one), then continue after the last kept pair. A window with no pair at all
// is skipped by half its size on both sides. O(n * window) score evaluations.
void AlignerImpl::GreedyLeaf(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1) {
  const uint32_t w = static_cast<uint32_t>(std::max(options_.max_dp_side, 2));
  uint32_t i = a0, j = b0;
  while (i < a1 && j < b1) {
    const uint32_t ea = std::min(a1, i + w), eb = std::min(b1, j + w);
    const bool last = ea == a1 && eb == b1;
    std::vector<std::pair<uint32_t, uint32_t>> picked;
    std::vector<bool> by_name;
    MatchWindow(i, ea, j, eb, &picked, &by_name);
    if (picked.empty()) {
      if (last) break;
      i = std::min(a1, i + w / 2);
      j = std::min(b1, j + w / 2);
      continue;
    }
    size_t keep = 0;
    while (keep < picked.size() &&
           (last || keep == 0 || (picked[keep].first < i + w / 2 && picked[keep].second < j + w / 2))) {
      ++keep;
    }
    for (size_t k = 0; k < keep; ++k) Pair(picked[k].first, picked[k].second, by_name[k]);
    if (last) break;
    i = picked[keep - 1].first + 1;
    j = picked[keep - 1].second + 1;
  }
}

void AlignerImpl::ApplyOverrides(std::vector<KernelPair>* forced) {
  const Trace& ta = *a_.trace;
  const Trace& tb = *b_.trace;
  std::vector<char> used_a(ta.kernels.size()), used_b(tb.kernels.size());
  if (options_.overrides) {
    const Overrides& o = *options_.overrides;
    for (const OverrideRule& rule : o.rules) {
      std::optional<uint32_t> ka = ResolveOverrideKey(rule.a, ta);
      std::optional<uint32_t> kb = ResolveOverrideKey(rule.b, tb);
      std::string where = absl::StrCat(o.path, ":", rule.line, ": override ");
      if (!ka) {
        result_.warnings.push_back(absl::StrCat(where, "A key '", rule.a.text, "' matches no kernel of ", ta.path));
      }
      if (!kb) {
        result_.warnings.push_back(absl::StrCat(where, "B key '", rule.b.text, "' matches no kernel of ", tb.path));
      }
      if (!ka || !kb) continue;
      if (used_a[*ka] || used_b[*kb]) {
        result_.warnings.push_back(absl::StrCat(where, "'", rule.a.text, ", ", rule.b.text,
                                                "' names a kernel already forced by an earlier line; ignored"));
        continue;
      }
      used_a[*ka] = used_b[*kb] = 1;
      forced->push_back({*ka, *kb, MatchMethod::kOverride});
    }
  }
  for (uint32_t i = 0; i < ta.kernels.size(); ++i) if (!used_a[i]) a_.seq.push_back(i);
  for (uint32_t j = 0; j < tb.kernels.size(); ++j) if (!used_b[j]) b_.seq.push_back(j);
}

Alignment AlignerImpl::Run() {
  std::vector<KernelPair> forced;
  ApplyOverrides(&forced);
  // Overrides in order on both sides split the problem; the others are
  // simply taken out of it.
  std::sort(forced.begin(), forced.end(), [](const KernelPair& x, const KernelPair& y) { return x.a < y.a; });
  std::vector<KernelPair> fences;
  for (const KernelPair& p : forced) {
    if (fences.empty() || p.b > fences.back().b) fences.push_back(p);
  }
  uint32_t pa = 0, pb = 0;
  auto region_to = [&](uint32_t ea, uint32_t eb) {
    if (pa < ea && pb < eb) Solve({pa, ea, pb, eb, 0});
    pa = ea;
    pb = eb;
  };
  for (const KernelPair& f : fences) {
    region_to(static_cast<uint32_t>(std::lower_bound(a_.seq.begin(), a_.seq.end(), f.a) - a_.seq.begin()),
              static_cast<uint32_t>(std::lower_bound(b_.seq.begin(), b_.seq.end(), f.b) - b_.seq.begin()));
  }
  region_to(static_cast<uint32_t>(a_.seq.size()), static_cast<uint32_t>(b_.seq.size()));

  result_.pairs.insert(result_.pairs.end(), forced.begin(), forced.end());
  std::sort(result_.pairs.begin(), result_.pairs.end(),
            [](const KernelPair& x, const KernelPair& y) { return x.a < y.a; });
  std::vector<char> paired_a(a_.trace->kernels.size()), paired_b(b_.trace->kernels.size());
  for (const KernelPair& p : result_.pairs) {
    paired_a[p.a] = 1;
    paired_b[p.b] = 1;
  }
  for (uint32_t i = 0; i < paired_a.size(); ++i) if (!paired_a[i]) result_.only_a.push_back(i);
  for (uint32_t j = 0; j < paired_b.size(); ++j) if (!paired_b[j]) result_.only_b.push_back(j);
  return std::move(result_);
}

}  // namespace

namespace {

// The steps `t`'s kernel records belong to, as "13" or "2-5, 7" (the first
// few runs; steps absent from a record are left out).
std::vector<int64_t> CapturedSteps(const Trace& t) {
  std::vector<int64_t> steps;
  for (const Kernel& k : t.kernels) {
    if (k.step >= 0 && (steps.empty() || steps.back() != k.step)) steps.push_back(k.step);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

std::string StepsText(const std::vector<int64_t>& steps) {
  std::string out;
  int runs = 0;
  for (size_t i = 0; i < steps.size();) {
    size_t j = i;
    while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
    if (++runs > 6) return out + ", ...";
    absl::StrAppend(&out, out.empty() ? "" : ", ", steps[i]);
    if (j > i) absl::StrAppend(&out, "-", steps[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

Alignment Align(const Trace& a, const Trace& b, const AlignOptions& options) {
  Alignment result = AlignerImpl(a, b, options).Run();
  // Kernels pair by name and order, not by step: two captures of different
  // steps pair across steps. Said, since the result then compares two points
  // of the run the user may think are one.
  const std::vector<int64_t> sa = CapturedSteps(a), sb = CapturedSteps(b);
  if (!sa.empty() && !sb.empty() && sa != sb) {
    result.warnings.push_back(absl::StrCat("A captured step ", StepsText(sa), " in full, B step ", StepsText(sb),
                                           ": kernels were paired across different steps"));
  }
  // An operator-level trace against a kernel-level one: operators and
  // kernels pair only where their names happen to agree. Said, never silent.
  const CaptureLevel la = a.capture_level(), lb = b.capture_level();
  if (la != lb) {
    result.warnings.push_back(absl::StrCat("A was captured at ", std::string(CaptureLevelName(la)), " level, B at ",
                                           std::string(CaptureLevelName(lb)), " level (capture.level): operator records and kernel launches do not pair; "
                                           "re-capture both the same way (--ops)"));
  }
  return result;
}

}  // namespace numtrace::analyzer
