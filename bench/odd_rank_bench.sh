#!/usr/bin/env bash
# Figures for docs/benchmarks.md ("The odd rank out"): a simulated
# data-parallel job (numtrace-sim --dp 64, 200 watched steps, one bit flipped
# on rank 37 at step 120), then `numtrace-diff --across-ranks` time and max
# RSS (/usr/bin/time -v) for 4, 16, 64 and 256 ranks. The 4 and 16 rank jobs
# are real --dp 4/16 jobs; 256 ranks are the 64-rank job's traces four
# times over (ranks renumbered in the header and the file name), since a
# --dp N rank recomputes every other rank's gradients (N^2 x steps).
# Also "long" jobs: the 64- and 256-rank traces with their 200 steps repeated
# 50 times (10,000 steps, about 5 MB a rank). SKIP_JOBS=1 reuses the jobs.
#   bench/odd_rank_bench.sh BUILD_DIR WORK_DIR
set -euo pipefail
bin="$1/bin" work="$2" steps=200
mkdir -p "$work" && cd "$work"
job() {  # N DIR FLIP_RANK
  rm -rf "$2"
  for r in $(seq 0 $(($1 - 1))); do
    flip=-1; [ "$r" = "$3" ] && flip=120
    RANK=$r NUMTRACE_WATCH=full NUMTRACE_OUTPUT_DIR="$2" "$bin/numtrace-sim" --dp "$1" --batch 8 --steps $steps --flip-bit $flip >/dev/null &
    if (( r % 2 == 1 )); then wait; fi
  done
  wait
}
measure() {
for d in "$@"; do
  rc=0; /usr/bin/time -v -o $d.time "$bin/numtrace-diff" --across-ranks $d --json $d.json --force >$d.txt 2>&1 || rc=$?
  echo "$d: exit $rc, $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' $d.time) wall, $(sed -n 's/.*User time (seconds): //p' $d.time) s user, max RSS $(sed -n 's/.*Maximum resident set size (kbytes): //p' $d.time) kB, $(du -sh $d | cut -f1) of traces; $(grep '^odd rank out' $d.txt | cut -c1-60)"
done
}
start=$(date +%s)
[ "${SKIP_JOBS:-0}" = 1 ] || { job 4 r4 3; job 16 r16 11; job 64 r64 37; }
echo "generation: $(( $(date +%s) - start )) s"
# 256 ranks: the 64-rank job four times over.
rm -rf r256 && mkdir r256
for copy in 0 1 2 3; do
  for r in $(seq 0 63); do
    n=$((copy * 64 + r))
    sed "1s/\"rank\":$r,/\"rank\":$n,/" r64/rank_$r.ntrace.jsonl >r256/rank_$n.ntrace.jsonl
  done
done
# Long jobs: each 64-rank trace's 200 steps repeated 50 times (10,000 steps,
# about 5 MB a rank, more than one reader buffer), step numbers continued.
for d in 64 256; do
  rm -rf long$d && mkdir long$d
  python3 - r$d long$d <<'PY'
import os, re, sys
src, dst = sys.argv[1], sys.argv[2]
for f in os.listdir(src):
    lines = open(os.path.join(src, f)).read().splitlines(keepends=True)
    head = [l for l in lines if '"type":"digest"' not in l and '"type":"footer"' not in l]
    digests = [l for l in lines if '"type":"digest"' in l]
    foot = [l for l in lines if '"type":"footer"' in l]
    with open(os.path.join(dst, f), 'w') as out:
        out.writelines(head)
        for k in range(50):
            for l in digests:
                out.write(re.sub(r'"step":(\d+)', lambda m: '"step":%d' % (int(m.group(1)) + 200 * k), l, count=1))
        out.writelines(foot)
PY
done
measure r4 r16 r64 r256 long64 long256
