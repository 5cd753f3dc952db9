#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs every test: ctest, then
# the PyTorch hooks against real torch/triton from PyPI (scripts/test-torch.sh;
# skipped with the reason where the package index cannot be reached, or with
# NUMTRACE_SKIP_TORCH_TESTS=1). Exit status: non-zero when either failed.
# GPU tests (label `gpu`) skip with a reason where there is no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root/build"
status=0
ctest --output-on-failure -j "$(nproc)" "$@" || status=$?
"$root/scripts/test-torch.sh" "$root/build" || status=$?
exit "$status"
