#!/usr/bin/env bash
# The walkthroughs' commands are the tested ones: every ```sh block that
# follows a line `<!-- tested -->` (or `<!-- tested: exit N -->`) in a page
# is run, in page order, in one fresh directory per page, with the build's
# bin/ first on PATH, and must end with that exit status (default 0).
#   doc_commands_test.sh BUILD_DIR PAGE.md...
set -uo pipefail
build="$(cd "$1" && pwd)"; shift
passed=0 failed=0
for page in "$@"; do
  work="$(mktemp -d)"
  blocks="$work/.blocks"; mkdir -p "$blocks"
  # Split the page into numbered block files, each with its expected status.
  awk -v dir="$blocks" '
    /^<!-- tested(: exit [0-9]+)? -->$/ { want = 0; if (match($0, /exit [0-9]+/)) want = substr($0, RSTART + 5, RLENGTH - 5); armed = 1; next }
    armed && /^```sh$/ { n++; file = sprintf("%s/%03d.sh", dir, n); print want > (file ".want"); inblock = 1; armed = 0; next }
    inblock && /^```$/ { inblock = 0; close(file); next }
    inblock { print > file; next }
    { armed = armed && ($0 ~ /^[[:space:]]*$/) }
  ' "$page"
  count=$(ls "$blocks"/*.sh 2>/dev/null | wc -l)
  if [ "$count" -eq 0 ]; then echo "FAIL: $page has no tested block"; failed=$((failed + 1)); fi
  for block in "$blocks"/*.sh; do
    [ -e "$block" ] || continue
    want=$(cat "$block.want")
    (cd "$work" && env PATH="$build/bin:$PATH" NO_COLOR=1 bash -e "$block") >"$block.log" 2>&1
    got=$?
    if [ "$got" = "$want" ]; then passed=$((passed + 1)); else
      failed=$((failed + 1))
      echo "FAIL: $(basename "$page") block $(basename "$block" .sh): exit $got, expected $want"
      sed 's/^/  $ /' "$block"; tail -15 "$block.log" | sed 's/^/  | /'
    fi
  done
  rm -rf "$work"
done
echo "doc_commands_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
