#include "analyzer/judge/step_finder.h"

#include <algorithm>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/format/digest.h"
#include "common/settings/config.h"  // ParseByteSize: the parser the setting was read with

namespace numtrace::analyzer {
namespace {

const char* SideName(const Trace& t, bool a) { return a ? "A" : "B"; }

std::string Who(const Trace& t, bool a) { return absl::StrCat(SideName(t, a), " (", t.path, ")"); }

std::optional<StepNonfinite> FirstNonfinite(const Trace& t) {
  for (const StepDigest& d : t.digests) {
    if (d.nonfinite) return StepNonfinite{d.step, *d.nonfinite, t.digest_names[d.first + *d.nonfinite]};
  }
  return std::nullopt;
}

std::string WatchMode(const Trace& t) { return t.header.capture ? t.header.capture->watch : std::string(); }

// NUMTRACE_MIN_BYTES as the header recorded it ("0" when absent: the default).
std::string MinBytes(const Trace& t) {
  if (t.header.capture) {
    for (const auto& [variable, value] : t.header.capture->settings) {
      if (variable == "NUMTRACE_MIN_BYTES") return value;
    }
  }
  return "0";
}

// Whether the two recorded limits differ in bytes ("4k" and "4096" do not);
// as text where either does not parse.
bool MinBytesDiffer(const Trace& a, const Trace& b) {
  const std::optional<uint64_t> x = shim::ParseByteSize(MinBytes(a)), y = shim::ParseByteSize(MinBytes(b));
  return x && y ? *x != *y : MinBytes(a) != MinBytes(b);
}

// A digest of 0 marks a launch the shim could not digest (`lost`).
constexpr uint64_t kLostDigest = 0;

// A `full` watch trace that also holds a step in full must agree with
// itself: each launch's digest is KernelDigest of its kernel record's buffer
// hashes (docs/format.md). Checked where the step's kernel records are all
// there (same count and names in order); returns how many launches disagree
// and how many were checked.
std::pair<uint64_t, uint64_t> SelfCheck(const Trace& t) {
  uint64_t bad = 0, checked = 0;
  if (WatchMode(t) != "full" || t.kernels.empty()) return {0, 0};
  absl::flat_hash_map<int64_t, std::vector<uint32_t>> by_step;
  for (uint32_t i = 0; i < t.kernels.size(); ++i) by_step[t.kernels[i].step].push_back(i);
  std::vector<uint64_t> hashes;
  for (const StepDigest& d : t.digests) {
    auto it = by_step.find(d.step);
    if (it == by_step.end() || it->second.size() != d.kernels) continue;
    for (uint64_t i = 0; i < d.kernels; ++i) {
      const Kernel& k = t.kernels[it->second[i]];
      if (t.Name(k) != t.strings.View(t.digest_names[d.first + i])) break;
      const uint64_t digest = t.digest_hashes[d.first + i];
      if (digest == kLostDigest) continue;
      hashes.clear();
      for (const Buffer& b : t.BuffersOf(k)) hashes.push_back(b.stats.hash);
      ++checked;
      if (KernelDigest(hashes) != digest) ++bad;
    }
  }
  return {bad, checked};
}

}  // namespace

std::optional<StepsResult> FindSteps(const Trace& a, const Trace& b) {
  StepsResult r;
  r.a_has_digests = !a.digests.empty();
  r.b_has_digests = !b.digests.empty();
  if (!r.a_has_digests && !r.b_has_digests) return std::nullopt;
  r.nonfinite_a = FirstNonfinite(a);
  r.nonfinite_b = FirstNonfinite(b);
  for (bool side_a : {true, false}) {
    const Trace& t = side_a ? a : b;
    if (t.digests.empty()) {
      r.notes.push_back(absl::StrCat(Who(t, side_a), " holds no digest records (not captured with --watch): "
                                     "no steps compared"));
    }
  }
  if (!r.a_has_digests || !r.b_has_digests) return r;

  if (WatchMode(a) != WatchMode(b) && !WatchMode(a).empty() && !WatchMode(b).empty()) {
    r.notes.push_back(absl::StrCat("A was digested '", WatchMode(a), "', B '", WatchMode(b),
                                   "': their digests cover different bytes and cannot match"));
  }
  // Buffers below --min-bytes are neither measured nor folded into a digest,
  // so two runs computing the same numbers digest differently.
  if (MinBytesDiffer(a, b)) {
    r.notes.push_back(absl::StrCat("A was captured with --min-bytes ", MinBytes(a), ", B with --min-bytes ",
                                   MinBytes(b), ": the buffers below it are left out of the digests, which "
                                   "therefore cannot match; capture both with the same --min-bytes"));
  }
  absl::flat_hash_map<int64_t, size_t> b_steps;
  for (size_t i = 0; i < b.digests.size(); ++i) b_steps.emplace(b.digests[i].step, i);
  // A step written twice (launches of a step still in flight when its record
  // went out): only the first record of each step is compared; say so.
  for (bool side_a : {true, false}) {
    const Trace& t = side_a ? a : b;
    absl::flat_hash_map<int64_t, int> seen;
    uint64_t repeated = 0;
    int64_t example = 0;
    for (const StepDigest& d : t.digests) {
      if (seen[d.step]++ == 1) {
        if (repeated++ == 0) example = d.step;
      }
    }
    if (repeated != 0) {
      r.notes.push_back(absl::StrCat(repeated, " step numbers of ", SideName(t, side_a),
                                     " have more than one digest record (first: step ", example,
                                     "): only the first record of each is compared"));
    }
  }
  uint64_t only_a = 0, structure = 0;
  std::vector<bool> b_used(b.digests.size(), false);
  absl::flat_hash_map<int64_t, bool> a_done;
  for (size_t ia = 0; ia < a.digests.size(); ++ia) {
    const StepDigest& da = a.digests[ia];
    if (a_done[da.step]) continue;  // a repeated step number: noted above
    a_done[da.step] = true;
    auto it = b_steps.find(da.step);
    if (it == b_steps.end()) {
      // Past the end of a trace cut short is the cut, said below; not a misalignment.
      if (!(b.truncated && da.step > b.digests.back().step)) ++only_a;
      continue;
    }
    const size_t ib = it->second;
    b_used[ib] = true;
    const StepDigest& db = b.digests[ib];
    ++r.compared;
    // Where the kernel sequences first part (names or length), and the first differing digest.
    const uint64_t common = std::min(da.kernels, db.kernels);
    std::optional<uint64_t> name_at, digest_at;
    for (uint64_t i = 0; i < common; ++i) {
      const uint64_t ha = a.digest_hashes[da.first + i], hb = b.digest_hashes[db.first + i];
      if (a.strings.View(a.digest_names[da.first + i]) != b.strings.View(b.digest_names[db.first + i])) {
        name_at = i;
        break;
      }
      if (!digest_at && ha != hb && ha != kLostDigest && hb != kLostDigest) digest_at = i;
    }
    if (!name_at && da.kernels != db.kernels) name_at = common;
    StepState state = StepState::kEqual;
    if (name_at) {
      state = StepState::kStructure;
      ++structure;
    } else if (digest_at || (da.hash != db.hash && da.lost == 0 && db.lost == 0)) {
      state = StepState::kDiffers;
    }
    if (state != StepState::kEqual) {
      ++r.differing;
      if (!r.first_differing) {
        r.first_differing = da.step;
        r.first_is_structure = name_at.has_value();
        r.first_index = name_at ? *name_at : digest_at.value_or(0);
        r.a_digest = ia;
        r.b_digest = ib;
        if (r.first_index < da.kernels) r.a_name = a.digest_names[da.first + r.first_index];
        if (r.first_index < db.kernels) r.b_name = b.digest_names[db.first + r.first_index];
      }
    }
    if (da.nonfinite || db.nonfinite) state = std::max(state, StepState::kNonfinite);
    r.strip_steps.push_back(da.step);
    r.strip.push_back(state);
  }
  uint64_t only_b = 0;
  for (size_t i = 0; i < b.digests.size(); ++i) {
    if (b_steps[b.digests[i].step] != i) continue;  // a repeated step number: noted above
    if (!b_used[i] && !(a.truncated && b.digests[i].step > a.digests.back().step)) ++only_b;
  }

  r.unpaired_a = only_a;
  r.unpaired_b = only_b;
  if (r.compared == 0) {
    r.notes.push_back(absl::StrCat("no step number is in both traces: A has steps ", a.digests.front().step, "-",
                                   a.digests.back().step, ", B steps ", b.digests.front().step, "-",
                                   b.digests.back().step, " (one run resumed from a checkpoint?)"));
  } else if (only_a != 0 || only_b != 0) {
    r.notes.push_back(absl::StrCat("step numbers do not line up: ", only_a, " steps of A and ", only_b,
                                   " of B have no step of the same number on the other side (A: steps ",
                                   a.digests.front().step, "-", a.digests.back().step, ", B: ",
                                   b.digests.front().step, "-", b.digests.back().step,
                                   "); steps were compared by number"));
  }
  if (r.compared > 1 && structure == r.compared) {
    r.notes.push_back(absl::StrCat("no compared step has the same kernel sequence on both sides (", r.compared,
                                   " steps): these look like different programs"));
  }
  for (bool side_a : {true, false}) {
    const Trace& t = side_a ? a : b;
    if (const auto [bad, checked] = SelfCheck(t); bad != 0) {
      r.notes.push_back(absl::StrCat(bad, " of ", checked, " launches of ", SideName(t, side_a),
                                     " captured in full have digests that disagree with their kernel records' "
                                     "buffer hashes: the digests of that trace are suspect"));
    }
    if (t.truncated) {
      r.notes.push_back(absl::StrCat(Who(t, side_a), " was cut short: steps after ", t.digests.back().step,
                                     " were not compared"));
    }
    if (const uint64_t lost = t.LostDigests(); lost != 0) {
      r.notes.push_back(absl::StrCat(lost, " launches of ", SideName(t, side_a),
                                     " were not digested (the device could not take them): unknown, never a "
                                     "difference; the comparison is incomplete"));
    }
  }
  return r;
}

}  // namespace numtrace::analyzer
