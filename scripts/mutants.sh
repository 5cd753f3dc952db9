#!/usr/bin/env bash
# Mutation check of the rules that decide answers: a short list of plausible
# one-line bugs (below), each applied alone to a scratch copy of the working
# tree, rebuilt incrementally (only the targets its tests need; ccache when
# installed), and run against the tests that must catch it. A mutant those
# tests pass is a SURVIVOR: a rule no test holds. Not part of CI (minutes,
# not seconds); run it before closing an issue that changes how a verdict
# is decided, and put its table in the closing note (README, "Development").
#
#   scripts/mutants.sh [--list] [ID...]     (no ID: every mutant)
#
# The scratch copy and its build are kept between runs, so a rerun rebuilds
# only what changed (the first run builds every listed target in full; ccache
# helps only with objects built before from the same sources):
#   ${NUMTRACE_MUTANTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/numtrace/mutants}
# First the clean copy is built and every listed test run once (a test that
# fails without any mutant would make the table meaningless: exit 2). Then
# one line per mutant: caught (with the failing tests' count), SURVIVED, or
# broken (the mutant did not build: fix its text). Exit status 1 when any
# mutant survived or did not build, 0 when every one was caught.
#
# A mutant: "@ ID FILE", "? what the bug does", "- the exact text it
# replaces" (once in FILE, one line), "+ the replacement", "t TARGETS" to
# build, "r CTEST_REGEX" of the tests that must catch it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${NUMTRACE_MUTANTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/numtrace/mutants}"
jobs="${NUMTRACE_MUTANTS_JOBS:-$(nproc)}"
python="${PYTHON3:-python3}"

read -r -d '' MUTANTS <<'EOF' || true
@ ranked-first-latest analyzer/judge/ranked_pairs.h
? the "first" origin and root is the latest in A's launch order, not the earliest
- if (!out->first || pairs[i].a < pairs[*out->first].a) out->first = i;
+ if (!out->first || pairs[i].a > pairs[*out->first].a) out->first = i;
t analyzer_judge_test analyzer_debugmode_real_test analyzer_cli_test
r ^(Roots|Origins|Judge|DebugModeReal|DiffCommand)\.

@ roots-born analyzer/judge/roots.cc
? a diverged pair with no diverged input stays inherited: never a root
- v.cause = Cause::kBorn;
+ (void)0;
t analyzer_judge_test analyzer_debugmode_real_test
r ^(Roots|Origins|Judge|DebugModeReal)\.

@ origins-last-input analyzer/judge/origins.cc
? only the last input decides whether a pair's inputs differ
- differs |= differ;
+ differs = differ;
t analyzer_judge_test analyzer_debugmode_real_test analyzer_cli_test
r ^(Roots|Origins|Judge|DebugModeReal|DebugModeOrigins|DebugModeDiffTest)\.

@ tolerance-doubled analyzer/judge/buffer_compare.cc
? twice the calibrated tolerance is still within it
- if (score > 1) return {PairStatus::kDiverged, rel, score};
+ if (score > 2) return {PairStatus::kDiverged, rel, score};
t analyzer_judge_test analyzer_noise_study_test
r ^(CompareBuffers|Tolerance|Judge|NoiseStudy)\.

@ integers-by-tolerance analyzer/judge/buffer_compare.cc
? integer and raw buffers get the float tolerance instead of "any change counts"
- if (!IsFloat(a.dtype)) {
+ if (false) {
t analyzer_judge_test
r ^(CompareBuffers|Tolerance|Judge)\.

@ ninf-ignored analyzer/judge/buffer_compare.cc
? a different count of -inf is not a nonfinite mismatch
- if (x.nan != y.nan || x.inf != y.inf || x.ninf != y.ninf)
+ if (x.nan != y.nan || x.inf != y.inf)
t analyzer_judge_test
r ^(CompareBuffers|Tolerance|Judge)\.

@ only-b-identical analyzer/judge/judge.cc
? a kernel only B ran leaves the verdict identical
- } else if (c.within_tolerance > 0 || c.only_a > 0 || c.only_b > 0) {
+ } else if (c.within_tolerance > 0 || c.only_a > 0) {
t analyzer_judge_test analyzer_debugmode_real_test
r ^(Judge|DebugModeReal)\.

@ anchor-not-unique analyzer/align/aligner.cc
? a key A runs twice anchors the alignment as if it were unique
- if (c.na == 1 && c.nb == 1) cand.emplace_back(i, c.pb);
+ if (c.nb == 1) cand.emplace_back(i, c.pb);
t analyzer_align_test analyzer_debugmode_real_test
r ^(Align|AlignProvenance|AlignRepeatedSteps|DebugModeReal)\.

@ steps-last-launch analyzer/judge/step_finder.cc
? the last launch of a step is never compared
- for (uint64_t i = 0; i < common; ++i) {
+ for (uint64_t i = 0; i + 1 < common; ++i) {
t analyzer_steps_test
r ^StepFinderTest\.

@ steps-launch-zero analyzer/judge/step_finder.cc
? launch 0 of a step is never compared (a program change there reads as a value change)
- for (uint64_t i = 0; i < common; ++i) {
+ for (uint64_t i = 1; i < common; ++i) {
t analyzer_steps_test
r ^StepFinderTest\.

@ steps-lost-differs analyzer/judge/step_finder.cc
? a launch the device could not digest counts as a difference
- } else if (digest_at || (da.hash != db.hash && da.lost == 0 && db.lost == 0 && StepHashHolds(a, da) &&
+ } else if (digest_at || (da.hash != db.hash && StepHashHolds(a, da) &&
t analyzer_steps_test
r ^StepFinderTest\.

@ inplace-not-by-inputs analyzer/judge/value_compare.cc
? an in-place op that logged no output is not judged on its input hashes
- const bool by_inputs = oa.empty() && ob.empty();
+ const bool by_inputs = false;
t analyzer_debugmode_real_test analyzer_cli_test
r ^(DebugModeReal|DebugModeDiffTest|DebugModeOrigins|NothingCompared)\.

@ mask-bug-equal analyzer/judge/value_compare.cc
? equal printed outputs from differing inputs read as bitwise equal
- if (inputs_differ) v.status = PairStatus::kWithinTolerance;
+ (void)inputs_differ;
t analyzer_debugmode_real_test analyzer_cli_test
r ^(DebugModeReal|DebugModeDiffTest)\.

@ hash-only-as-full analyzer/read/debugmode_reader.cc
? a hash-only block gets a full block's output count (an empty output to compare)
- size_t outputs = hash_only ? b.out_hash.size() : std::max<size_t>({b.out_hash.size(), b.numel.size(), size_t{1}});
+ size_t outputs = std::max<size_t>({b.out_hash.size(), b.numel.size(), size_t{1}});
t analyzer_read_test analyzer_debugmode_real_test
r ^(DebugModeReaderTest|DebugModeReal)\.

@ no-footer-complete analyzer/read/trace_reader.cc
? a trace without its footer reads as complete
- if (!trace.footer) trace.truncated = true;
+ (void)0;
t analyzer_read_test analyzer_cli_test
r ^(TraceReaderTest|TraceReaderErrorsTest|DiffCommand)

@ bounded-read-uncapped common/io/bounded_file.cc
? a file over its reader's cap is read anyway
- if (size > max_bytes) {
+ if (false && size > max_bytes) {
t analyzer_read_test launcher_test
r ^(BoundedFileTest|ByteCount|HostileSummary)\.

@ steps-any-value common/settings/settings.cc
? --steps / NUMTRACE_STEPS accepts a value it cannot parse
- if (s) c->steps = std::move(*s);
+ if (s) c->steps = std::move(*s); else return true;
t shim_engine_test common_settings_test launcher_test
r (^|/)(SettingsTable|BadValueTest|ConfigTest|ConfigWordsTest|RunRefusesBadOption|RunSettings)

@ allocator-any-word common/settings/settings.cc
? --allocator / NUMTRACE_ALLOCATOR accepts any word (the job would run uncaptured)
- if (m) c->allocator = *m;
+ if (m) c->allocator = *m; else return true;
t shim_engine_test common_settings_test launcher_test
r (^|/)(SettingsTable|BadValueTest|ConfigTest|ConfigWordsTest|RunRefusesBadOption|RunSettings)

@ tensor-map-free-space shim/engine/tensor_map.cc
? a pointer into a segment's free space is not refused
- if (!r.block && segments_.MaybeInside(address)) r.outside_tensors = segments_.Find(address).has_value();
+ (void)0;
t shim_engine_test
r ^(TensorMapEngineTest|WatchTest|EngineTest)\.

@ sigquit-dropped launcher/child_process.cc
? SIGQUIT sent to numtrace is not forwarded (the job is left running)
- constexpr int kForwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
+ constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
t numtrace-cli numtrace-diff numtrace-sim numtrace-make-pair
r ^scripts\.process$
EOF

# One mutant per record: ids, and the fields by id.
declare -a ids=()
declare -A m_file m_what m_old m_new m_targets m_regex
while IFS= read -r line; do
  case "$line" in
    "@ "*) read -r _ id file <<<"$line"; ids+=("$id"); m_file[$id]="$file" ;;
    "? "*) m_what[$id]="${line#? }" ;;
    "- "*) m_old[$id]="${line#- }" ;;
    "+ "*) m_new[$id]="${line#+ }" ;;
    "t "*) m_targets[$id]="${line#t }" ;;
    "r "*) m_regex[$id]="${line#r }" ;;
  esac
done <<<"$MUTANTS"

if [ "${1:-}" = --list ]; then
  for id in "${ids[@]}"; do printf '%-24s %-38s %s\n' "$id" "${m_file[$id]}" "${m_what[$id]}"; done
  exit 0
fi
chosen=("${ids[@]}")
if [ $# -gt 0 ]; then
  chosen=("$@")
  for id in "${chosen[@]}"; do
    [ -n "${m_file[$id]:-}" ] || { echo "mutants: no mutant '$id' (scripts/mutants.sh --list)" >&2; exit 2; }
  done
fi

# The scratch copy: the working tree's tracked and unignored files, copied
# only where they differ (so the kept build rebuilds only what changed).
mkdir -p "$dir/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard) | "$python" -c '
import os, shutil, sys
root, dst = sys.argv[1], sys.argv[2]
for rel in sys.stdin.read().split("\0"):
    src = os.path.join(root, rel)
    if not rel or not os.path.isfile(src):
        continue
    out = os.path.join(dst, rel)
    try:
        with open(src, "rb") as a, open(out, "rb") as b:
            if a.read() == b.read():
                continue
    except FileNotFoundError:
        os.makedirs(os.path.dirname(out), exist_ok=True)
    shutil.copy2(src, out)
' "$root" "$dir/src"
src="$dir/src"
build="$src/build"
. "$root/scripts/compiler-cache.sh" "$src"   # the scratch copy reuses build/'s objects
[ -e "$build/build.ninja" ] || cmake --no-warn-unused-cli -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "${compiler_cache[@]}" >"$dir/configure.log" 2>&1 \
  || { echo "mutants: cmake failed (see $dir/configure.log)" >&2; exit 2; }

# Applies or reverts one mutant: the old text must be in its file exactly once.
swap() {  # swap FILE FROM TO
  "$python" - "$@" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"mutants: {path}: the text to replace is there {text.count(old)} times, not once: {old}")
open(path, "w").write(text.replace(old, new))
PY
}
applied=""
restore() { [ -z "$applied" ] || swap "$src/${m_file[$applied]}" "${m_new[$applied]}" "${m_old[$applied]}"; applied=""; }
trap restore EXIT

# run_tests REGEX LOG: ctest over the regex; sets total and failed.
run_tests() {
  local rc=0
  (cd "$build" && ctest -R "$1" -j "$jobs" --timeout 180 --output-on-failure) >"$2" 2>&1 || rc=$?
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$2" | tail -1)
  failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$2" | tail -1)
  [ -n "$total" ] || { total=0; failed=0; }
  [ "$rc" = 0 ] || [ "${failed:-0}" -gt 0 ] || failed=rc$rc
}

start=$(date +%s)
mkdir -p "$dir/logs"
all_targets=$(for id in "${chosen[@]}"; do echo "${m_targets[$id]}"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
echo "mutants: ${#chosen[@]} mutants; building the clean copy in $build (targets: $all_targets)"
# shellcheck disable=SC2086
nice cmake --build "$build" -j "$jobs" --target $all_targets >"$dir/logs/clean.build.log" 2>&1 \
  || { echo "mutants: the clean copy does not build (see $dir/logs/clean.build.log)" >&2; exit 2; }
# Each set of tests the mutants are judged by, once, clean (one regex at a
# time: a test that does not run clean could not catch anything).
declare -A clean_done
for id in "${chosen[@]}"; do
  regex="${m_regex[$id]}"
  [ -z "${clean_done[$regex]:-}" ] || continue
  clean_done[$regex]=1
  run_tests "$regex" "$dir/logs/$id.clean.log"
  if [ "$total" = 0 ] || [ "$failed" != 0 ]; then
    echo "mutants: without any mutant, the tests $regex: ${failed} of ${total} failed (none ran: 0 of 0);" \
         "fix that first (see $dir/logs/$id.clean.log)" >&2
    exit 2
  fi
done
echo "mutants: clean copy passes every listed test ($(( $(date +%s) - start )) s)"

survivors=0 broken=0
report="$dir/report.txt"
printf '%-24s %-9s %-8s %s\n' mutant result tests "what the bug does" | tee "$report"
for id in "${chosen[@]}"; do
  t0=$(date +%s)
  swap "$src/${m_file[$id]}" "${m_old[$id]}" "${m_new[$id]}"
  applied=$id
  # shellcheck disable=SC2086
  if ! nice cmake --build "$build" -j "$jobs" --target ${m_targets[$id]} >"$dir/logs/$id.build.log" 2>&1; then
    result=broken; broken=$((broken + 1)); counts="-"
  else
    run_tests "${m_regex[$id]}" "$dir/logs/$id.log"
    counts="$failed/$total"
    if [ "$failed" = 0 ]; then result=SURVIVED; survivors=$((survivors + 1)); else result=caught; fi
  fi
  restore
  printf '%-24s %-9s %-8s %s (%s s)\n' "$id" "$result" "$counts" "${m_what[$id]}" "$(( $(date +%s) - t0 ))" \
    | tee -a "$report"
done
# Leave the copy's build matching its clean sources.
# shellcheck disable=SC2086
nice cmake --build "$build" -j "$jobs" --target $all_targets >"$dir/logs/restore.build.log" 2>&1 || true
echo "mutants: ${#chosen[@]} run, $survivors survived, $broken did not build, in $(( $(date +%s) - start )) s" \
     "(tests column: failed/run; logs in $dir/logs)" | tee -a "$report"
[ "$survivors" = 0 ] && [ "$broken" = 0 ]
