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
# One allocation per tensor for PyTorch, unless the user chose otherwise.
out="$(unset PYTORCH_CUDA_ALLOC_CONF; NUMTRACE_LIB="$tmp/libnumtrace.so" "$src/scripts/numtrace" run -- sh -c 'echo "$PYTORCH_CUDA_ALLOC_CONF"')"
[ "$out" = "backend:cudaMallocAsync" ] || { echo "alloc conf not set: $out"; exit 1; }
out="$(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True NUMTRACE_LIB="$tmp/libnumtrace.so" \
       "$src/scripts/numtrace" run -- sh -c 'echo "$PYTORCH_CUDA_ALLOC_CONF"' 2>"$tmp/err")"
[ "$out" = "expandable_segments:True" ] && grep -q "caching-allocator segments" "$tmp/err" || {
  echo "user alloc conf not kept or not warned: $out"; exit 1; }
set +e
"$src/scripts/numtrace" run --bogus -- true 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || { echo "bad option: rc=$rc $(cat "$tmp/err")"; exit 1; }
echo "launcher_test: 5 passed, 0 failed"
