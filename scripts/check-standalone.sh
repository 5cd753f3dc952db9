#!/usr/bin/env bash
# Proves the repository stands on its own, and runs the whole suite there:
# clones the checkout into an empty temporary folder (nothing beside it, so
# no shared/ folder or other sibling can be reached), lays the working
# tree's uncommitted changes over the clone (so what is tested is what you
# have; a clean CI clone has none), builds it, and runs every test there:
# ctest (arguments go to ctest), the real-PyTorch tests (test-torch.sh) and
# the demo. A build, test or script path that reaches outside the checkout
# fails here even where the developer's machine would hide it.
#
#   scripts/check-standalone.sh [ctest arguments...]
#   scripts/check-standalone.sh --clone-only DIR   (makes the clone in DIR,
#                                  which must not exist, and stops; tests)
#
# Called by scripts/test.sh (and so by CI) after the build in build/. The
# clone's build reuses that build's objects through ccache (build.sh), so
# the tree is compiled once, not twice; the clone only links. Exit status:
# non-zero when any part failed; the clone is kept then, and its path said.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
clone_only=""
if [ "${1:-}" = --clone-only ]; then
  [ -n "${2:-}" ] && [ ! -e "$2" ] || { echo "check-standalone: --clone-only needs a new folder" >&2; exit 2; }
  clone_only="$2"
fi
work="$(mktemp -d /tmp/numtrace-standalone.XXXXXX)"
keep=0
trap '[ "$keep" = 1 ] || rm -rf "$work"' EXIT
clone="${clone_only:-$work/numtrace}"
git clone -q --no-hardlinks "$root" "$clone"

# Uncommitted changes: modified and untracked (not ignored) files copied,
# deleted ones removed. Untracked files would not be in someone else's
# clone, so they are named: commit them before trusting the result.
changed=0
while IFS= read -r -d '' f; do
  if [ -e "$root/$f" ] || [ -L "$root/$f" ]; then
    mkdir -p "$clone/$(dirname "$f")"
    cp -a "$root/$f" "$clone/$f"
  else
    rm -f "$clone/$f"
  fi
  changed=$((changed + 1))
done < <(git -C "$root" ls-files -z -m -o -d --exclude-standard --deduplicate)
untracked="$(git -C "$root" ls-files -o --exclude-standard | wc -l)"
echo "standalone: clone of $(git -C "$clone" rev-parse --short HEAD) in $clone (nothing beside it)" \
     "$([ "$changed" = 0 ] || echo "with $changed uncommitted change(s) laid over it")"
[ "$untracked" = 0 ] ||
  echo "standalone: note: $untracked untracked file(s) are included; a clone of the commit would lack them"

[ -z "$clone_only" ] || exit 0

status=0
"$clone/scripts/build.sh" >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"
  echo "standalone: the build failed in the clone (log: $work/build.log)" >&2
  keep=1
  exit 1
}
(cd "$clone/build" && ctest --output-on-failure -j "$(nproc)" "$@") || {
  echo "standalone: tests failed in the clone" >&2
  status=1
}
"$clone/scripts/test-torch.sh" "$clone/build" || {
  echo "standalone: the real-PyTorch tests failed in the clone" >&2
  status=1
}
if (cd "$clone" && scripts/demo.sh >"$work/demo.log" 2>&1) && [ -s "$clone/report.html" ]; then
  :
else
  tail -n 20 "$work/demo.log"
  echo "standalone: scripts/demo.sh failed or wrote no report.html in the clone (log: $work/demo.log)" >&2
  status=1
fi
if [ "$status" = 0 ]; then
  echo "standalone: build, tests, real-PyTorch tests and demo pass in a clone with nothing beside it"
else
  keep=1
  echo "standalone: the clone is kept for a look: $clone" >&2
fi
exit "$status"
