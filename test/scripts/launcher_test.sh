#!/usr/bin/env bash
# The launcher sets the environment it promises and rejects bad usage with
# exit 2 and one line.
set -euo pipefail
src="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
touch "$tmp/libnumtrace.so"
out="$(NUMTRACE_LIB="$tmp/libnumtrace.so" "$src/scripts/numtrace" run --out "$tmp/o" --steps 3-4 --label A -- \
       sh -c 'echo "$LD_PRELOAD|$NUMTRACE_OUTPUT_DIR|$NUMTRACE_STEPS|$NUMTRACE_LABEL"')"
[ "$out" = "$tmp/libnumtrace.so|$tmp/o|3-4|A" ] || { echo "run env wrong: $out"; exit 1; }
out="$(NUMTRACE_LIB="$tmp/libnumtrace.so" "$src/scripts/numtrace" run --injection -- sh -c 'echo "${LD_PRELOAD:-}|$CUDA_INJECTION64_PATH"')"
[ "$out" = "|$tmp/libnumtrace.so" ] || { echo "injection env wrong: $out"; exit 1; }
set +e
"$src/scripts/numtrace" run --bogus -- true 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || { echo "bad option: rc=$rc $(cat "$tmp/err")"; exit 1; }
echo "launcher_test: 3 passed, 0 failed"
