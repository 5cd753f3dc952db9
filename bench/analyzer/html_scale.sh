#!/usr/bin/env bash
# How the HTML report grows with the number of diverged pairs, and how
# numtrace-diff compares with torchtitan's compare_numerics.py on the same
# DebugMode pairs (docs/benchmarks.md, "HTML report size and speed").
#
#   bench/analyzer/html_scale.sh [SCRATCH_DIR]       # default /tmp/numtrace-html-bench
#
# Needs build/bin/numtrace-diff and build/bin/numtrace-make-pair
# (scripts/build.sh --target numtrace-diff --target numtrace-make-pair) and
# /usr/bin/time (Debian package `time`). Environment:
#   NUMTRACE_BENCH_RUNS=5            runs per measurement (medians are printed)
#   NUMTRACE_BENCH_DIVERGE="100000 99000 90000 50000 0"   --diverge-at values
#                                    (A seq of the planted divergence; 100000 = none)
#   NUMTRACE_BENCH_RACE="default 50000"   the pairs raced against compare_numerics.py
#   COMPARE_NUMERICS=PATH            compare_numerics.py to race against; without
#                                    it the ratio part is skipped. It is another
#                                    project's code: fetch it for the run, never
#                                    commit it (docs/benchmarks.md says how).
# Prints one row per pair: diverged pairs, HTML bytes, JSON summary bytes,
# terminal lines, median wall and user time without and with the HTML
# report; then, with COMPARE_NUMERICS, per pair the paired runs (numtrace-diff
# writing its HTML, then compare_numerics.py writing its own, one after the
# other) and the median of the per-run ratios.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${1:-/tmp/numtrace-html-bench}"
runs="${NUMTRACE_BENCH_RUNS:-5}"
diverge="${NUMTRACE_BENCH_DIVERGE:-100000 99000 90000 50000 0}"
bin="${NUMTRACE_BENCH_BIN:-$root/build/bin}"
mkdir -p "$scratch"
cd "$scratch"

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# "wall user sys" of one command, its output discarded (numtrace-diff exits 1 on a
# divergence; time then writes a line about it before the figures).
timed() { /usr/bin/time -f "%e %U %S" -o time.txt "$@" >/dev/null 2>&1 || true; tail -1 time.txt; }

gen() {  # diverge-at ("default": the generator's 60%) -> pair dm-$1/{a,b}.log, kept while it exists
  [ -s "dm-$1/b.log" ] && return
  mkdir -p "dm-$1"
  local at=()
  [ "$1" = default ] || at=(--diverge-at "$1")
  "$bin/numtrace-make-pair" --format debugmode --kernels 100000 "${at[@]}" \
    --out-a "dm-$1/a.log" --out-b "dm-$1/b.log" >/dev/null
}

echo "| --diverge-at | diverged pairs | HTML bytes | JSON bytes | terminal lines | wall / user without HTML | wall / user with HTML |"
echo "|---|---|---|---|---|---|---|"
for d in $diverge; do
  gen "$d"
  p="dm-$d"
  "$bin/numtrace-diff" "$p/a.log" "$p/b.log" --json "$p/s.json" -o "$p/r.html" --force >"$p/term.txt" 2>&1 || true
  diverged=$(grep -o '"counts":{[^}]*}' "$p/s.json" | grep -o '"diverged":[0-9]*' | cut -d: -f2)
  : >plain.txt; : >html.txt
  for _ in $(seq "$runs"); do
    timed "$bin/numtrace-diff" "$p/a.log" "$p/b.log" --quiet >>plain.txt
    timed "$bin/numtrace-diff" "$p/a.log" "$p/b.log" --quiet -o "$p/r.html" --force >>html.txt
  done
  printf '| %s | %s | %s | %s | %s | %s / %s s | %s / %s s |\n' "$d" "$diverged" \
    "$(stat -c %s "$p/r.html")" "$(stat -c %s "$p/s.json")" "$(wc -l <"$p/term.txt")" \
    "$(cut -d' ' -f1 plain.txt | median)" "$(cut -d' ' -f2 plain.txt | median)" \
    "$(cut -d' ' -f1 html.txt | median)" "$(cut -d' ' -f2 html.txt | median)"
done

[ -n "${COMPARE_NUMERICS:-}" ] || exit 0
echo
for d in ${NUMTRACE_BENCH_RACE:-default 50000}; do
  gen "$d"
  p="dm-$d"
  echo "pair --diverge-at $d: run, numtrace-diff wall / CPU (user+sys), compare_numerics.py wall / CPU, ratios"
  : >ratios.txt; : >cpu_ratios.txt
  for i in $(seq "$runs"); do
    read -r nt_wall nt_user nt_sys < <(timed "$bin/numtrace-diff" "$p/a.log" "$p/b.log" -o nt.html --force --quiet)
    read -r cn_wall cn_user cn_sys < <(timed python3 "$COMPARE_NUMERICS" "$p/a.log" "$p/b.log" -o cn.html)
    nt_cpu=$(awk -v u="$nt_user" -v s="$nt_sys" 'BEGIN {print u + s}')
    cn_cpu=$(awk -v u="$cn_user" -v s="$cn_sys" 'BEGIN {print u + s}')
    ratio=$(awk -v a="$nt_wall" -v b="$cn_wall" 'BEGIN {printf "%.1f", b / a}')
    cpu_ratio=$(awk -v a="$nt_cpu" -v b="$cn_cpu" 'BEGIN {printf "%.1f", b / a}')
    echo "$ratio" >>ratios.txt
    echo "$cpu_ratio" >>cpu_ratios.txt
    echo "  $i: $nt_wall / $nt_cpu s, $cn_wall / $cn_cpu s, ${ratio}x wall, ${cpu_ratio}x CPU"
  done
  echo "  median ratio $(median <ratios.txt)x wall, $(median <cpu_ratios.txt)x CPU;" \
    "HTML $(stat -c %s nt.html) against $(stat -c %s cn.html) bytes"
done
