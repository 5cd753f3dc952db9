#!/usr/bin/env bash
# scripts/numtrace forwards to the built numtrace command (whose verbs are
# tested in test/launcher), exit codes included.
#   launcher_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1" build="$(cd "$2" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
export NUMTRACE_BUILD_DIR="$build"
"$src/scripts/numtrace" --version | grep -q '^numtrace [0-9]' || { echo "--version not forwarded"; exit 1; }
out="$("$src/scripts/numtrace" run -o "$tmp/o" --steps 3-4 --label A -- \
       sh -c 'echo "$LD_PRELOAD|$NUMTRACE_OUTPUT_DIR|$NUMTRACE_STEPS|$NUMTRACE_LABEL"' 2>/dev/null | sed -n 1p)"
[ "$out" = "$build/lib/libnumtrace.so|$tmp/o|3-4|A" ] || { echo "run env wrong: $out"; exit 1; }
set +e
"$src/scripts/numtrace" run -o "$tmp/p" -- sh -c 'exit 5' >/dev/null 2>&1; rc=$?
"$src/scripts/numtrace" bogus 2>"$tmp/err"; rc2=$?
NUMTRACE_BUILD_DIR="$tmp/none" "$src/scripts/numtrace" --version 2>"$tmp/err3"; rc3=$?
set -e
[ "$rc" = 5 ] || { echo "job exit status not passed through: $rc"; exit 1; }
[ "$rc2" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || { echo "bad verb: rc=$rc2 $(cat "$tmp/err")"; exit 1; }
[ "$rc3" = 2 ] && grep -q 'not built' "$tmp/err3" || { echo "missing build: rc=$rc3"; exit 1; }
echo "launcher_test: 4 passed, 0 failed"
