#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs every test; then proves
# that a clone with nothing beside it builds and passes too
# (check-standalone.sh; NUMTRACE_SKIP_STANDALONE=1 skips that while
# iterating). GPU tests (label `gpu`) skip with a reason where there is no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
(cd "$root/build" && ctest --output-on-failure -j "$(nproc)" "$@")
if [ "${NUMTRACE_SKIP_STANDALONE:-0}" != 1 ]; then
  "$root/scripts/check-standalone.sh"
fi
