#!/usr/bin/env bash
# Installs what is missing, builds (Release) into build/ and runs every test
# once: ctest, then the PyTorch hooks against real torch/triton from PyPI
# (scripts/test-torch.sh), then the demo - all inside a clone of the checkout
# with nothing beside it (check-standalone.sh), so that a build, test or
# script that reaches outside the checkout fails. The clone reuses build/'s
# objects through ccache: the tree is compiled once.
#
#   scripts/test.sh [ctest arguments...]
#
# NUMTRACE_SKIP_STANDALONE=1 runs ctest and the torch tests in build/
# instead (quicker while iterating; proves nothing about paths).
# test-torch.sh is not run, said in one line, where the package index
# cannot be reached (a failure under CI), or with NUMTRACE_SKIP_TORCH_TESTS=1.
# GPU tests (label `gpu`) skip with a reason where there is no GPU.
# Exit status: non-zero when any part failed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
if [ "${NUMTRACE_SKIP_STANDALONE:-0}" = 1 ]; then
  status=0
  (cd "$root/build" && ctest --output-on-failure -j "$(nproc)" "$@") || status=$?
  "$root/scripts/test-torch.sh" "$root/build" || status=$?
  exit "$status"
fi
exec "$root/scripts/check-standalone.sh" "$@"
