#!/usr/bin/env bash
# Which GPU is bad (issue 27), through the command line: a simulated
# data-parallel job (numtrace-sim --dp N, one process per rank, watch mode)
# with one bit flipped on one rank after the gradient all-reduce; then
# `numtrace-diff --across-ranks` names that rank, step and kernel (exit 1)
# within 1 GB of memory (max RSS from /usr/bin/time -v where installed), and
# the healthy job's replicas pass (exit 0). Sized for CI on 2 cores
# (16 ranks x 50 steps, generated once; the run time of the ranks grows as
# ranks^2 x steps, see docs/benchmarks.md for 64 x 200 and beyond).
set -euo pipefail
src="$1" bin="$2"
ranks="${3:-16}" steps="${4:-50}" bad_rank="${5:-11}" bad_step="${6:-23}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
sim="$bin/bin/numtrace-sim" diff="$bin/bin/numtrace-diff"
fail() { echo "odd_rank_loop_test: $*" >&2; exit 1; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); exec('print(' + sys.argv[2] + ')')" "$@"; }
cd "$tmp"
# One process per rank, as torchrun starts them; two at a time (2 cores).
job() {  # DIR FLIP_RANK
  for r in $(seq 0 $((ranks - 1))); do
    flip=-1; [ "$r" = "$2" ] && flip="$bad_step"
    RANK=$r NUMTRACE_WATCH=full NUMTRACE_OUTPUT_DIR="$1" \
      "$sim" --dp "$ranks" --batch 8 --steps "$steps" --flip-bit "$flip" >/dev/null &
    if (( r % 2 == 1 )); then wait; fi
  done
  wait
}
# Hostile: --dp without a usable RANK is one line, exit 2.
for bad in "" 4 -1 x; do
  rc=0; RANK="$bad" "$sim" --dp 4 --steps 1 >o.txt 2>e.txt || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <e.txt)" = 1 ] && grep -q "needs RANK set to a rank in 0..3" e.txt \
    || fail "RANK='$bad': exit $rc: $(cat e.txt)"
done
job healthy -1
job sdc "$bad_rank"
[ "$(ls sdc | wc -l)" = "$ranks" ] || fail "expected $ranks traces: $(ls sdc)"

measure=()
[ -x /usr/bin/time ] && measure=(/usr/bin/time -v -o time.txt)
rc=0; "${measure[@]}" "$diff" --across-ranks sdc --json s.json -o s.html >out.txt 2>err.txt || rc=$?
[ "$rc" = 1 ] || fail "exit $rc, expected 1: $(cat out.txt err.txt)"
sgd=_ZN2at6native25multi_tensor_apply_kernelILi2ENS0_18TensorListMetadataIfLi2EEENS0_10SGDFunctorIfEEEEvT0_T1_f
grep -q "odd rank out: rank $bad_rank (host [^)]*) at step $bad_step, launch 18 $sgd: $((ranks - 1)) of $ranks ranks agree" out.txt \
  || fail "terminal does not name rank $bad_rank, step $bad_step, the SGD update: $(cat out.txt)"
[ "$(field s.json "d['odd_rank_out'][0]['rank'], d['odd_rank_out'][0]['step'], d['odd_rank_out'][0]['index']")" \
  = "$bad_rank $bad_step 18" ] || fail "JSON first entry: $(head -c 600 s.json)"
[ "$(field s.json "d['odd_rank_out'][0]['name']")" = "$sgd" ] || fail "JSON name"
[ "$(field s.json "sorted({o['rank'] for o in d['odd_rank_out']})")" = "[$bad_rank]" ] || fail "another rank listed"
[ "$(field s.json "min(o['step'] for o in d['odd_rank_out'])")" = "$bad_step" ] || fail "a departure before the flip"
grep -q '<canvas id="strip">' s.html || fail "no strip in the HTML"
# The page's script parses (where node is installed).
if command -v node >/dev/null; then
  python3 -c "import re,sys; print(re.findall(r'<script>(.*?)</script>', open('s.html').read(), re.S)[0])" >strip.js
  node --check strip.js 2>js.txt || fail "the HTML's script does not parse: $(head -5 js.txt)"
fi
if [ -f time.txt ]; then
  kb="$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)"
  [ "$kb" -lt $((1024 * 1024)) ] || fail "max RSS $kb kB for $ranks ranks x $steps steps"
  echo "across-ranks, $ranks ranks x $steps steps: max RSS $kb kB, $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.txt)"
fi

rc=0; "$diff" --across-ranks healthy --json h.json >hout.txt 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "healthy replicas exit $rc: $(cat hout.txt)"
grep -q "verdict: consistent" hout.txt || fail "healthy: $(cat hout.txt)"
[ "$(field h.json "len(d['odd_rank_out']), d['steps']['compared']")" = "0 $steps" ] || fail "healthy JSON"
# The all-reduce and the update agree on every step; the rest is each rank's own data.
[ "$(field h.json "d['launches']['agreeing'] >= 5 * $steps")" = True ] || fail "too few agreeing launches: $(cat hout.txt)"
echo "odd_rank_loop_test: ok"
