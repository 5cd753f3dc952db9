#!/usr/bin/env bash
# Issue 18, item 7, end to end on the simulated device: the same training
# loop with one allocation per tensor (as with cudaMallocAsync) and inside
# one caching-allocator segment whose blocks are reported as the PyTorch
# hooks report them (numtrace-sim --memory segments: the padding between
# blocks is NaN) must give the same trace - `numtrace diff` says identical,
# for full captures and for watch mode. The control: the same segment
# unreported makes every buffer the 16 MiB segment, and the diff says so.
set -euo pipefail
src="$1" bin="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
sim="$bin/bin/numtrace-sim"
export PATH="$bin/bin:$PATH"
fail() { echo "tensor_map_loop_test: $*" >&2; exit 1; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); exec('print(' + sys.argv[2] + ')')" "$@"; }
# counter TRACE NAME: the footer's capture counter NAME, read with a JSON parser.
counter() { python3 -c "import json,sys; f=[r for r in map(json.loads, open(sys.argv[1])) if r.get('type') == 'footer'][-1]; print(f['counters'][sys.argv[2]])" "$@"; }
cd "$tmp"
for m in tensors segments segments-unreported; do
  numtrace run -o "$m" --steps 1-2 -- "$sim" --steps 4 --memory "$m" >/dev/null 2>"$m.err" || fail "$m: $(cat "$m.err")"
done
numtrace diff tensors segments --json same.json --quiet || fail "tensors vs reported segments: $(numtrace diff tensors segments --color never | head -8)"
[ "$(field same.json "d['verdict']")" = identical ] || fail "verdict $(field same.json "d['verdict']")"
tr=segments/rank_0.ntrace.jsonl
[ "$(counter "$tr" tensor_events)" -gt 0 ] || fail "no tensor_events in the footer"
[ "$(counter "$tr" pointers_outside_tensors)" = 0 ] || fail "pointers refused: $(counter "$tr" pointers_outside_tensors)"
grep -q '"bytes":16777216' "$tr" && fail "a whole segment was measured despite the reported blocks"
# The control: unreported, every buffer is the segment (and its NaN padding).
rc=0; numtrace diff tensors segments-unreported --json control.json --color never >control.txt 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "unreported segments: exit $rc, expected 1 (diverged)"
grep -q "warning: B: the PyTorch tensor map was not attached" control.txt || fail "no warning: $(head -5 control.txt)"
grep -q '"kind":"tensor_map","name":"attached"' "$tr" || fail "no note of kind tensor_map, name attached"
grep -q '"bytes":16777216' segments-unreported/rank_0.ntrace.jsonl || fail "control: no segment-sized buffer"
# Watch mode resolves through the same map.
numtrace run -o wt --watch -- "$sim" --steps 20 --memory tensors >/dev/null 2>&1
numtrace run -o ws --watch -- "$sim" --steps 20 --memory segments >/dev/null 2>&1
numtrace diff wt ws --json watch.json --quiet || fail "watch: tensors vs reported segments differ"
echo "tensor_map_loop_test: ok ($(counter "$tr" tensor_events) tensor events)"
