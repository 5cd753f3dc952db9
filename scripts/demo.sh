#!/usr/bin/env bash
# The whole numtrace job on its built-in example, no GPU needed:
#  1. capture a reference run of the simulated MLP training loop (numtrace-sim:
#     the real capture runtime and engine, on the host reference device);
#  2. capture the same run with a planted bug (layer 2's forward GEMM output
#     scaled by 1.001 in step 2);
#  3. diff them: terminal summary, out/demo/summary.json and ./report.html;
#  4. the element view: run the commands the first-divergence card printed -
#     re-capture both runs with a dump of that launch, then
#     `numtrace-diff --tensors` on the two dumps (./tensors.html).
# Same set-up as test.sh: build.sh installs what is missing, then only what
# the demo runs is built (the `numtrace` command with libnumtrace.so and the
# hooks, numtrace-diff, numtrace-sim); scripts/build.sh builds everything.
# numtrace-diff exits 1 when runs diverge - here they are meant to - so 0 and
# 1 both mean the demo worked; 2 (bad input) is a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
echo "== building what the demo runs: numtrace, libnumtrace.so, numtrace-diff, numtrace-sim" \
     "(a few minutes on a fresh clone; scripts/build.sh builds everything)"
"$root/scripts/build.sh" --target numtrace-cli --target numtrace-diff --target numtrace-sim
cd "$root"
out="out/demo"
rm -rf "$out"
mkdir -p "$out"

echo "== capturing step 2 of the reference run"
NUMTRACE_OUTPUT_DIR="$out/run_a" NUMTRACE_STEPS=2 NUMTRACE_LABEL=reference \
  build/bin/numtrace-sim --steps 4
echo "== capturing step 2 of the run with a planted change (layer 2 GEMM x 1.001)"
NUMTRACE_OUTPUT_DIR="$out/run_b" NUMTRACE_STEPS=2 NUMTRACE_LABEL=perturbed \
  build/bin/numtrace-sim --steps 4 --perturb 2 --perturb-step 2
echo "== diffing"
status=0
build/bin/numtrace-diff "$out/run_a" "$out/run_b" --json "$out/summary.json" -o report.html --force \
  >"$out/diff.txt" || status=$?
cat "$out/diff.txt"
if [ "$status" -gt 1 ]; then
  echo "demo: numtrace-diff failed (exit $status)" >&2
  exit "$status"
fi
echo
echo "== the element view: the commands the first-divergence card printed"
export PATH="$root/build/bin:$PATH"  # they call the `numtrace` command
grep -A3 "element view:" "$out/diff.txt" | tail -3 | sed 's/^ *//' >"$out/dump_commands.sh"
[ "$(wc -l <"$out/dump_commands.sh")" = 3 ] || { echo "demo: no dump commands printed" >&2; exit 1; }
while read -r cmd; do
  echo "\$ $cmd"
  case "$cmd" in
    *" diff --tensors "*) status=0; bash -c "$cmd -o tensors.html --force" || status=$?
                          [ "$status" -le 1 ] || { echo "demo: --tensors failed (exit $status)" >&2; exit "$status"; } ;;
    *) bash -c "$cmd" >/dev/null ;;
  esac
done <"$out/dump_commands.sh"
echo
echo "demo: report written to $root/report.html, JSON summary to $root/$out/summary.json,"
echo "      element view to $root/tensors.html"
echo "demo: a larger generated pair (real kernel names, fusion, renamed kernels) is in examples/basic:"
echo "      build/bin/numtrace-diff examples/basic/run_a examples/basic/run_b -o report-basic.html"
