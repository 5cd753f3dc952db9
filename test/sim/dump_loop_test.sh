#!/usr/bin/env bash
# The element-level loop through the command line, as README shows it:
# capture A and B (B: three elements of layer 2's forward GEMM output moved
# 2^20 ULPs), diff, run the three commands the first-divergence card prints
# (re-capture A and B with the dump of that launch, --tensors), and check the
# element view names exactly the planted elements; then the same from a saved
# summary with --dump-first-divergence, and the launcher's bad usage.
set -euo pipefail
src="$1" bin="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
sim="$bin/bin/numtrace-sim"
export PATH="$bin/bin:$PATH"  # the printed commands call `numtrace`
NUMTRACE_DIFF="$bin/bin/numtrace-diff"
fail() { echo "dump_loop_test: $*" >&2; exit 1; }
cd "$tmp"
NUMTRACE_OUTPUT_DIR=run_a NUMTRACE_STEPS=2 "$sim" --steps 4 >/dev/null
NUMTRACE_OUTPUT_DIR=run_b NUMTRACE_STEPS=2 "$sim" --steps 4 --perturb 2 --perturb-step 2 --perturb-ulps 1048576 >/dev/null
rc=0; "$NUMTRACE_DIFF" run_a run_b --json summary.json -o report.html --color never >diff.txt || rc=$?
[ "$rc" = 1 ] || fail "trace diff exit $rc, expected 1 (diverged)"
# The HTML card carries the same commands (the card's markup).
grep -q -- '<pre class="mono dumpcmd">numtrace run -o run_a-dump-seq3 --steps 2 --dump seq:3 ' report.html ||
  fail "the HTML report's first-divergence card has no dump commands"
grep -A3 "element view:" diff.txt | tail -3 | sed 's/^ *//' >cmds.sh
[ "$(wc -l <cmds.sh)" = 3 ] || fail "no dump commands printed: $(cat diff.txt)"
grep -q -- "--dump seq:3 " cmds.sh || fail "the commands do not dump seq 3 (layer 2's GEMM): $(cat cmds.sh)"
sed -n 1,2p cmds.sh | bash >/dev/null
for side in a b; do
  [ -f "run_$side-dump-seq3/dump_0_3.json" ] || fail "no dump sidecar for $side"
  ! grep -q '"type":"note"' "run_$side-dump-seq3/rank_0.ntrace.jsonl" ||
    fail "the re-run of $side left a note: $(grep '"type":"note"' "run_$side-dump-seq3/rank_0.ntrace.jsonl")"
done
rc=0; sed -n 3p cmds.sh | sed 's|$| --json t.json --color never|' | bash >tensors.txt || rc=$?
[ "$rc" = 1 ] || fail "--tensors exit $rc, expected 1: $(cat tensors.txt)"
# Exactly one buffer differs, in exactly the three planted elements, 2^20 ULPs each.
[ "$(grep -o '"mismatched":[1-9][0-9]*' t.json)" = '"mismatched":3' ] || fail "mismatches: $(cat tensors.txt)"
grep -q '"first_mismatch":5,' t.json || fail "first mismatch is not element 5: $(cat tensors.txt)"
grep -q '">255":3}' t.json || fail "ULP histogram: $(cat tensors.txt)"
grep -q '"max_ulp":1048576' t.json || fail "max ULP: $(cat tensors.txt)"
grep -q "arg 0 #2 after (out, f32\[640\]): 3 mismatched, 637 equal" tensors.txt || fail "summary: $(cat tensors.txt)"

# From the saved summary: each side's command with --dump-first-divergence.
numtrace run -o fd_a --steps 2 --dump-first-divergence summary.json --side a -- "$sim" --steps 4 >/dev/null
numtrace run -o fd_b --steps 2 --dump-first-divergence summary.json --side b -- \
  "$sim" --steps 4 --perturb 2 --perturb-step 2 --perturb-ulps 1048576 >/dev/null
rc=0; numtrace diff --tensors fd_a fd_b -q || rc=$?
[ "$rc" = 1 ] || fail "--tensors of the --dump-first-divergence dumps: exit $rc, expected 1"
! grep -q '"type":"note"' fd_a/rank_0.ntrace.jsonl || fail "fd_a has a note: the name check failed"

# Bad usage: exit 2 and one line.
NUMTRACE_OUTPUT_DIR=same NUMTRACE_STEPS=2 "$sim" --steps 4 >/dev/null
"$NUMTRACE_DIFF" run_a same --json same.json -q || fail "identical runs differ"
n=0
bad() {
  local rc=0
  n=$((n + 1))
  numtrace run -o "bad$n" "$@" -- true >/dev/null 2>err.txt || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <err.txt)" = 1 ] || fail "run $*: exit $rc, stderr: $(cat err.txt)"
}
bad --dump-first-divergence summary.json --side c
bad --dump-first-divergence summary.json
bad --dump-first-divergence same.json --side a
bad --dump-first-divergence missing.json --side a
bad --dump seq:1 --dump-first-divergence summary.json --side a
bad --side a
echo "dump_loop_test: passed"
