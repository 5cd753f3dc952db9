#!/usr/bin/env bash
# check-standalone.sh tests what the developer has, not only the last commit:
# its clone gets the working tree's modified and untracked files laid over
# it and loses the deleted ones, ignored files stay out, and the output says
# how many changes (and untracked files) went in. Run on a scratch git
# repository holding a copy of the script (--clone-only stops before the
# build).
set -euo pipefail
src="$1/scripts/check-standalone.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
repo="$tmp/repo"
mkdir -p "$repo/scripts" "$repo/dir"
cp "$src" "$repo/scripts/"
cd "$repo"
git init -q
echo old >a; echo gone >b; echo keep >"dir/with space"; echo 'ignored*' >.gitignore
git add -A && git -c user.name=t -c user.email=t@t commit -qm base
echo new >a; rm b; echo fresh >d; echo junk >ignored.log; echo changed >"dir/with space"
out="$(scripts/check-standalone.sh --clone-only "$tmp/clone")"
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }
c="$tmp/clone"
[ -d "$c/.git" ] || fail "the clone is no git checkout"
[ "$(cat "$c/a")" = new ] || fail "modified file a not laid over the clone"
[ ! -e "$c/b" ] || fail "deleted file b still in the clone"
[ "$(cat "$c/d")" = fresh ] || fail "untracked file d missing"
[ "$(cat "$c/dir/with space")" = changed ] || fail "modified file with a space not laid over"
[ ! -e "$c/ignored.log" ] || fail "an ignored file went into the clone"
grep -q "with 4 uncommitted change(s) laid over it" <<<"$out" || fail "change count not said"
grep -q "1 untracked file(s) are included" <<<"$out" || fail "untracked file not named"
# A clean checkout: nothing laid over, nothing said.
git -c user.name=t -c user.email=t@t commit -qam more
git add d && git -c user.name=t -c user.email=t@t commit -qm d
out="$(scripts/check-standalone.sh --clone-only "$tmp/clone2")"
grep -q "uncommitted\|untracked" <<<"$out" && fail "a clean checkout said it had changes"
[ "$(cat "$tmp/clone2/a")" = new ] || fail "clean clone lacks the committed change"
# A folder that exists already is refused, not overwritten.
status=0; scripts/check-standalone.sh --clone-only "$tmp/clone2" 2>/dev/null || status=$?
[ "$status" = 2 ] || fail "an existing folder was accepted (status $status)"
echo "standalone clone: working tree laid over, ignored files left out, clean checkout quiet"
