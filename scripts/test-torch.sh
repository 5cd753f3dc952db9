#!/usr/bin/env bash
# The PyTorch hooks (scripts/hooks/sitecustomize.py) against the REAL torch,
# triton and numpy from PyPI, on the CPU: step marks for SGD/Adam/AdamW
# (foreach, fused) and under torch.compile, chaining of an existing
# sitecustomize, and the Triton dtypes of kernels compiled for sm_90 without
# a GPU. Called by scripts/test.sh (and so by CI) after ctest.
#
#   scripts/test-torch.sh [BUILD_DIR]      (default: build/)
#
# The venv is made once and cached outside the source tree:
#   ${NUMTRACE_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/numtrace/venv-torch}
# PyPI's Linux torch wheel pulls in its CUDA libraries as nvidia-* wheels
# (measured 2026-12-01: 2.9 GB download, 51 s here); torch cannot be imported
# without them (a --no-deps install fails on libcufile.so.0), and the
# CPU-only wheel is not on PyPI, so the whole set is installed - once.
#
# Where the package index cannot be reached the tests are skipped with the
# reason and this script exits 0: a network problem never fails CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
venv="${NUMTRACE_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/numtrace/venv-torch}"
python="${PYTHON3:-python3}"
fake_lib="$build/test-bin/libfake_numtrace.so"
skip() { echo "torch tests: skipped: $*"; exit 0; }

for f in "$fake_lib" "$build/bin/numtrace"; do
  [ -e "$f" ] || { echo "torch tests: $f missing (build first)" >&2; exit 1; }
done
command -v "$python" >/dev/null || skip "no python3 on PATH"
if [ "${NUMTRACE_SKIP_TORCH_TESTS:-0}" = 1 ]; then skip "NUMTRACE_SKIP_TORCH_TESTS=1"; fi

if [ ! -e "$venv/.numtrace-ready" ]; then
  mkdir -p "$(dirname "$venv")"
  # One creator at a time (two worktrees, two CI runs): the others wait.
  exec 9>"$venv.lock"
  flock 9
  if [ ! -e "$venv/.numtrace-ready" ]; then
    echo "torch tests: creating $venv (torch, triton, numpy from PyPI; once)"
    tmp="$venv.tmp.$$"
    rm -rf "$tmp"
    "$python" -m venv "$tmp" || skip "python3 -m venv failed (Debian: apt-get install python3-venv)"
    start=$(date +%s)
    if ! timeout 1200 "$tmp/bin/pip" install -q --disable-pip-version-check --timeout 60 --retries 2 \
         torch triton numpy >"$tmp.log" 2>&1; then
      why="$( (grep -E '^ERROR' "$tmp.log" || tail -1 "$tmp.log") | tail -1 | cut -c1-200)"
      rm -rf "$tmp" "$tmp.log"
      skip "could not install torch/triton/numpy from the package index: $why"
    fi
    echo "torch tests: venv ready in $(( $(date +%s) - start )) s ($(du -sh "$tmp" | cut -f1))"
    rm -f "$tmp.log"
    # Move into place only when complete, so a cut install is never used.
    rm -rf "$venv"
    mv "$tmp" "$venv"
    touch "$venv/.numtrace-ready"
  fi
  exec 9>&-
fi

export NUMTRACE_TEST_FAKE_LIB="$fake_lib" NUMTRACE_TEST_HOOKS="$root/scripts/hooks" \
       NUMTRACE_TEST_NUMTRACE_BIN="$build/bin/numtrace"
exec "$venv/bin/python" "$root/test/scripts/torch/real_torch_test.py"
