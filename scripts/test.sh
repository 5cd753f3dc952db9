#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs every test: ctest, then
# the PyTorch hooks against real torch/triton from PyPI (scripts/test-torch.sh;
# not run, said in one line, where the package index cannot be reached - a
# failure under CI - or with NUMTRACE_SKIP_TORCH_TESTS=1); then proves that a clone with nothing beside
# it builds and passes too (check-standalone.sh; NUMTRACE_SKIP_STANDALONE=1
# skips that while iterating). Exit status: non-zero when any part failed.
# GPU tests (label `gpu`) skip with a reason where there is no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
status=0
(cd "$root/build" && ctest --output-on-failure -j "$(nproc)" "$@") || status=$?
"$root/scripts/test-torch.sh" "$root/build" || status=$?
if [ "${NUMTRACE_SKIP_STANDALONE:-0}" != 1 ]; then
  "$root/scripts/check-standalone.sh" || status=$?
fi
exit "$status"
