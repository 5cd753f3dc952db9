#include "analyzer/judge/step_finder.h"

#include <algorithm>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/format/digest.h"
#include "common/settings/value_parsers.h"  // ParseByteSize: the parser the setting was read with

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
  const std::optional<uint64_t> x = settings::ParseByteSize(MinBytes(a)), y = settings::ParseByteSize(MinBytes(b));
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

// Whether `y`'s steps are `x`'s under other numbers, as a job resumed from a
// checkpoint numbers them when nothing tells it the job's own count (the
// hooks send the optimizer's where it keeps one): one of y's first steps
// has the digest of a step of x with another number, and the step after it
// that of x's step after. Returns {y's step, x's step}.
std::optional<std::pair<int64_t, int64_t>> Renumbered(const Trace& x, const Trace& y) {
  // Steps whose digests x holds once (a step repeated unchanged says nothing).
  absl::flat_hash_map<uint64_t, std::optional<size_t>> x_by_hash;
  for (size_t i = 0; i < x.digests.size(); ++i) {
    if (x.digests[i].kernels == 0 || x.digests[i].lost != 0) continue;
    auto [it, inserted] = x_by_hash.emplace(x.digests[i].hash, i);
    if (!inserted) it->second.reset();
  }
  // The first steps, not only the first: a resumed process's first step also
  // holds its set-up's launches (loading the checkpoint).
  for (size_t j = 0; j + 1 < y.digests.size() && j < 3; ++j) {
    auto it = x_by_hash.find(y.digests[j].hash);
    if (it == x_by_hash.end() || !it->second || *it->second + 1 >= x.digests.size()) continue;
    const StepDigest &xs = x.digests[*it->second], &xn = x.digests[*it->second + 1];
    if (xs.step != y.digests[j].step && xn.hash == y.digests[j + 1].hash &&
        xn.step - xs.step == y.digests[j + 1].step - y.digests[j].step) {
      return std::pair(y.digests[j].step, xs.step);
    }
  }
  return std::nullopt;
}

// Whether a step record's `hash` is the fold of its launch digests, as the
// shim writes it (docs/format.md). One that is not was altered or damaged:
// its launch digests, not its hash, say whether it differs.
bool StepHashHolds(const Trace& t, const StepDigest& d) {
  return StepHash(std::span<const uint64_t>(t.digest_hashes).subspan(d.first, d.kernels)) == d.hash;
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

  bool modes_differ = false;
  if (WatchMode(a) != WatchMode(b) && !WatchMode(a).empty() && !WatchMode(b).empty()) {
    modes_differ = true;  // said once the comparison says whether it mattered
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
    } else if (digest_at || (da.hash != db.hash && da.lost == 0 && db.lost == 0 && StepHashHolds(a, da) &&
                             StepHashHolds(b, db))) {
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

  if (modes_differ) {
    // `sampled` digests a buffer within the sample whole, as `full` does: the
    // two only part on larger buffers.
    r.notes.push_back(
        r.differing == 0
            ? absl::StrCat("A was digested '", WatchMode(a), "', B '", WatchMode(b),
                           "': they agree, so every buffer was small enough to be digested whole by both")
            : absl::StrCat("A was digested '", WatchMode(a), "', B '", WatchMode(b),
                           "': a buffer larger than the sample is digested over other bytes on each side, so a "
                           "step may differ by that alone; capture both with the same --watch"));
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
  for (bool side_a : {true, false}) {
    const Trace& t = side_a ? a : b;
    uint64_t bad = 0;
    int64_t example = 0;
    for (const StepDigest& d : t.digests) {
      if (!StepHashHolds(t, d) && bad++ == 0) example = d.step;
    }
    if (bad != 0) {
      r.notes.push_back(absl::StrCat(bad, " step records of ", SideName(t, side_a), " (first: step ", example,
                                     ") have a step hash that is not the fold of their launch digests: altered "
                                     "or damaged; their launch digests were compared"));
    }
  }
  for (bool side_a : {true, false}) {
    const Trace &x = side_a ? b : a, &y = side_a ? a : b;
    if (const auto shifted = Renumbered(x, y)) {
      r.notes.push_back(absl::StrCat(SideName(y, side_a), "'s step ", shifted->first, " has the digests of ",
                                     SideName(x, !side_a), "'s step ", shifted->second, ", and the step after it ",
                                     "too: ", SideName(y, side_a), " looks resumed from a checkpoint with its steps "
                                     "numbered from another start (steps are paired by number; the hooks number "
                                     "them by the optimizer's step count where it keeps one: docs/walkthroughs.md)"));
      break;
    }
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
