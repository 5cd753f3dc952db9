#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs every test. Exit status
# is ctest's. GPU tests (label `gpu`) skip with a reason where there is no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)" "$@"
