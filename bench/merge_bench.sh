#!/usr/bin/env bash
# numtrace merge over N shard summaries (docs/benchmarks.md
# "Merging shard summaries"). The shards are N copies of one real one-rank
# shard (rank 1 of a 2-rank simulated run pair, diverged: first divergence,
# origins and roots filled) with the rank renumbered 0..N-1 of N; they are
# merged 3 times, each printing wall time and max RSS.
#   bench/merge_bench.sh BUILD_DIR [N=1024]
set -euo pipefail
build=$(cd "$1" && pwd)
n=${2:-1024}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in a b; do
  for r in 0 1; do
    p=""
    if [ $side = b ] && [ $r = 1 ]; then p="--perturb 2"; fi
    RANK=$r NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR="$work/$side" "$build/bin/numtrace-sim" --steps 2 $p >/dev/null
  done
done
"$build/bin/numtrace-diff" "$work/a" "$work/b" --ranks 1 --quiet --json "$work/one.json" || [ $? -eq 1 ]
python3 - "$work/one.json" "$work/shards" "$n" <<'EOF'
import json, os, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(src))
os.makedirs(out)
for r in range(n):
    s["shard"] = {"ranks": [r], "of": n}
    s["ranks"][0]["rank"] = r
    with open(f"{out}/shard_{r:05d}.json", "w") as f:
        json.dump(s, f, separators=(",", ":"))
EOF
echo "$n shards of $(stat -c %s "$work/shards/shard_00000.json") bytes each"
for i in 1 2 3; do
  rm -f "$work/merged.json"
  /usr/bin/time -q -f "merge: %e s wall, %U s user, %S s system, %M KiB max RSS" \
    "$build/bin/numtrace" merge "$work"/shards/shard_*.json --json "$work/merged.json" >/dev/null || [ $? -eq 1 ]
done
echo "merged summary: $(stat -c %s "$work/merged.json") bytes"
