#!/usr/bin/env bash
# Diffs the bundled example pair (examples/basic/run_a vs run_b) and leaves
# the HTML report at ./report.html in the repo root. Same set-up as test.sh:
# build.sh installs what is missing and builds Release first.
# numtrace-diff exits 1 when the runs diverged - the example is built to
# diverge, so 0 and 1 both mean the demo worked; 2 (bad input) is a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root"
status=0
build/bin/numtrace-diff examples/basic/run_a examples/basic/run_b -o report.html --force || status=$?
if [ "$status" -gt 1 ]; then
  echo "demo: numtrace-diff failed (exit $status)" >&2
  exit "$status"
fi
echo
echo "demo: report written to $root/report.html (open it in a browser)"
