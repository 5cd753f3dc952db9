#!/usr/bin/env bash
# Benchmarks numtrace-diff on generated pairs and prints a compact table:
#   200k-kernel pair, 1M-kernel pair (with its HTML report), 100k-op
#   DebugMode pair, and the bare simdjson floor for the 200k pair.
# Targets (2-core machine, page cache warm): 200k <= 2 s; 1M <= 15 s and
# <= 4 GB peak RSS; 1M HTML <= 50 MB; DebugMode 100k <= 0.5 s.
#
# Usage: scripts/bench-analyzer.sh [SCRATCH_DIR]     (default /tmp/numtrace-bench)
# Env:   NUMTRACE_BENCH_SKIP_BUILD=1  use the existing build/ as is
#        NUMTRACE_BENCH_BIN=DIR       take the binaries from DIR (default build/bin)
#        NUMTRACE_BENCH_CASES="200k 1m dm100k"  run only some cases
# The generated pairs (~3 GB) stay in SCRATCH_DIR and are reused while the
# generator and its arguments are unchanged; delete the folder to reclaim.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${1:-/tmp/numtrace-bench}"
cases="${NUMTRACE_BENCH_CASES:-200k 1m dm100k}"
bin="${NUMTRACE_BENCH_BIN:-$root/build/bin}"

if [ -z "${NUMTRACE_BENCH_SKIP_BUILD:-}" ]; then
  "$root/scripts/build.sh" >/dev/null
fi
for tool in numtrace-make-pair numtrace-simdjson-floor; do
  [ -x "$bin/$tool" ] || { echo "bench: $bin/$tool is missing (build failed?)" >&2; exit 2; }
done
have_diff=1
[ -x "$bin/numtrace-diff" ] || { have_diff=0; echo "bench: $bin/numtrace-diff not built: timing generation and the floor only" >&2; }
timer=/usr/bin/time
[ -x "$timer" ] || { timer=""; echo "bench: /usr/bin/time missing (Debian package 'time'): no peak RSS" >&2; }
mkdir -p "$scratch"

# seconds from GNU time's "h:mm:ss" or "m:ss.ss"
to_seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }

# gen NAME FORMAT COUNT FILE_NAME: a pair in $scratch/NAME/run_{a,b}/FILE_NAME
gen() {
  local dir="$scratch/$1" stamp
  stamp="$(stat -c %Y "$bin/numtrace-make-pair") $2 $3"
  if [ "$(cat "$dir/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/run_a" "$dir/run_b"
    local t0 t1
    t0=$(date +%s.%N)
    "$bin/numtrace-make-pair" --format "$2" --kernels "$3" --seed 1 \
      --out-a "$dir/run_a/$4" --out-b "$dir/run_b/$4" >"$dir/make-pair.txt"
    t1=$(date +%s.%N)
    echo "$stamp" >"$dir/.stamp"
    printf "generated %-7s %s in %.1f s\n" "$1" "$(grep -o 'A: [0-9]* [a-z]*, [0-9.]* MB' "$dir/make-pair.txt")" \
      "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  fi
}

rows=()
row() { rows+=("$(printf "%-22s %10s %9s %9s %10s %9s %9s  %s" "$@")"); }
row "case" "input MB" "wall s" "RSS MB" "parse MB/s" "HTML MB" "exit" "first divergence (planted)"

# run_case NAME FILE_NAME: times numtrace-diff on one generated pair
run_case() {
  local dir="$scratch/$1" a="$scratch/$1/run_a/$2" b="$scratch/$1/run_b/$2"
  local bytes; bytes=$(( $(stat -c %s "$a") + $(stat -c %s "$b") ))
  cat "$a" "$b" >/dev/null  # warm the page cache
  if [ "$have_diff" = 0 ]; then
    row "$1" "$(mb "$bytes")" "-" "-" "-" "-" "-" "(no numtrace-diff)"
    return
  fi
  local status=0 wall rss html planted found
  rm -f "$dir/report.html" "$dir/summary.json"
  if [ -n "$timer" ]; then
    "$timer" -v "$bin/numtrace-diff" "$a" "$b" --json "$dir/summary.json" -o "$dir/report.html" \
      --force >"$dir/diff.txt" 2>"$dir/time.txt" || status=$?
    wall=$(grep "Elapsed (wall clock)" "$dir/time.txt" | awk '{print $NF}' | to_seconds)
    rss=$(grep "Maximum resident set size" "$dir/time.txt" | awk '{printf "%.0f", $NF / 1024}')
  else
    local t0 t1; t0=$(date +%s.%N)
    "$bin/numtrace-diff" "$a" "$b" --json "$dir/summary.json" -o "$dir/report.html" --force \
      >"$dir/diff.txt" 2>&1 || status=$?
    t1=$(date +%s.%N); wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'); rss="-"
  fi
  html="-"
  [ -f "$dir/report.html" ] && html=$(mb "$(stat -c %s "$dir/report.html")")
  planted=$(grep -o 'A seq [0-9]*' "$dir/make-pair.txt" | head -1 | awk '{print $3}')
  found=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])).get("first_divergence"); print(f["a_seq"] if f else "none")' \
    "$dir/summary.json" 2>/dev/null || echo "?")
  row "$1" "$(mb "$bytes")" "$wall" "$rss" "$(awk -v b="$bytes" -v s="$wall" 'BEGIN { printf "%.0f", (s > 0) ? b / 1e6 / s : 0 }')" \
    "$html" "$status" "A seq $found ($planted)"
  [ "$status" -le 1 ] || echo "bench: numtrace-diff failed on $1 (exit $status): $(tail -1 "$dir/time.txt" "$dir/diff.txt" 2>/dev/null | tail -1)" >&2
}

for c in $cases; do
  case "$c" in
    200k)   gen p200k ntrace 200000 rank_0.ntrace.jsonl ;;
    1m)     gen p1m ntrace 1000000 rank_0.ntrace.jsonl ;;
    dm100k) gen dm100k debugmode 100000 rank_0_activations.log ;;
  esac
done
for c in $cases; do
  case "$c" in
    200k)   run_case p200k rank_0.ntrace.jsonl ;;
    1m)     run_case p1m rank_0.ntrace.jsonl ;;
    dm100k) run_case dm100k rank_0_activations.log ;;
  esac
done

echo
echo "numtrace-diff, page cache warm, $(nproc) cores, commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
printf "%s\n" "${rows[@]}"
echo "targets: 200k <= 2 s; 1m <= 15 s, <= 4096 MB RSS, HTML <= 50 MB; dm100k <= 0.5 s"

if [[ " $cases " == *" 200k "* ]]; then
  echo
  echo "simdjson floor, 200k pair (visit every name and buffer stats, build nothing):"
  for floor in numtrace-simdjson-floor numtrace-simdjson-floor-avx2; do
    [ -x "$bin/$floor" ] && "$bin/$floor" "$scratch/p200k/run_a/rank_0.ntrace.jsonl" \
      "$scratch/p200k/run_b/rank_0.ntrace.jsonl" | sed "s/^/  $floor: /"
  done
fi
