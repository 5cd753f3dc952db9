#!/usr/bin/env bash
# Proves the repository stands on its own: clones the committed tree into an
# empty temporary folder (nothing beside it, so no shared/ folder or other
# sibling can be reached), then builds it, runs the unit tests and the demo
# there. A build, test or script path that reaches outside the checkout
# fails here even where the developer's machine would hide it.
# Called by scripts/test.sh (and so by CI); uses the same Debian packages.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d /tmp/numtrace-standalone.XXXXXX)"
trap 'rm -rf "$work"' EXIT
clone="$work/numtrace"
git clone -q --no-hardlinks "$root" "$clone"
echo "standalone: clone of $(git -C "$clone" rev-parse --short HEAD) in $clone (nothing beside it)"
# Unit tests only: the fuzz pass, the GPU tests and the real-PyTorch tests
# already ran in the main build and say nothing more about paths.
cmake -S "$clone" -B "$clone/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$clone/build" -j "$(nproc)" >/dev/null
if ! (cd "$clone/build" && ctest -j "$(nproc)" -L cpu --output-on-failure) >"$work/ctest.log" 2>&1; then
  tail -n 80 "$work/ctest.log"
  echo "standalone: unit tests failed in the clone" >&2
  exit 1
fi
tail -n 3 "$work/ctest.log"
(cd "$clone" && scripts/demo.sh >/dev/null 2>&1) || { echo "standalone: scripts/demo.sh failed in the clone" >&2; exit 1; }
[ -s "$clone/report.html" ] || { echo "standalone: the demo wrote no report.html in the clone" >&2; exit 1; }
echo "standalone: build, unit tests and demo pass in a clone with nothing beside it"
