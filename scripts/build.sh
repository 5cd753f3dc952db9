#!/usr/bin/env bash
# Configures and builds numtrace (Release) into build/. Used by test.sh and
# demo.sh.
#
#   scripts/build.sh [--target T]... [cmake configure arguments...]
#
# With no --target everything is built (every test, fuzzer and benchmark);
# demo.sh names the few targets it runs.
#
# Compilations go through ccache (scripts/compiler-cache.sh says how), so the
# clone check-standalone.sh tests in only links.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
targets=()
while [ "$#" -ge 2 ] && [ "$1" = --target ]; do
  targets+=(--target "$2")
  shift 2
done
"$root/scripts/install-deps.sh"
. "$root/scripts/compiler-cache.sh" "$root"
cmake --no-warn-unused-cli -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${compiler_cache[@]}" "$@" >/dev/null
cmake --build "$root/build" -j "$(nproc)" "${targets[@]}"
