#!/usr/bin/env bash
# The installed tree works on its own: install to a temporary prefix, move
# it elsewhere (nothing may point back to the build or the first prefix),
# then capture, diff and show with the installed tools only. Then the Debian
# package: its Depends and its files, unpacked and run.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$(cd "$1" && pwd)" src="$(cd "$2" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() {  # check NAME CMD...: one result line
  local name=$1; shift
  if "$@" >"$tmp/last.log" 2>&1; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: $name"; sed 's/^/  | /' "$tmp/last.log" | tail -20; fi
}

cmake --install "$build" --prefix "$tmp/p" >/dev/null
for f in bin/numtrace bin/numtrace-diff bin/numtrace-sim lib/libnumtrace.so include/numtrace.h \
         share/numtrace/hooks/sitecustomize.py share/numtrace/hooks/numtrace_provenance.py \
         share/numtrace/hooks/numtrace_tensor_map.py share/numtrace/hooks/numtrace_alloc_bridge.cc \
         share/numtrace/hooks/numtrace_bench_pause.py share/numtrace/hooks/numtrace_environment.py \
         share/doc/numtrace/README.md share/doc/numtrace/walkthroughs.md; do
  check "installed $f" test -e "$tmp/p/$f"
done
# Relocate: the installed tree must not need its prefix, the build or the source.
mv "$tmp/p" "$tmp/moved"
p="$tmp/moved"
check "no build or source path in the installed files" bash -c "! grep -rlF -e '$build' -e '$src' -e '$tmp/p/' '$p'"
check "no RUNPATH in installed binaries" bash -c "! readelf -d '$p'/bin/* '$p'/lib/libnumtrace.so | grep -E 'RUNPATH|RPATH'"

cd "$tmp"
export PATH="$p/bin:/usr/bin:/bin" NO_COLOR=1
unset NUMTRACE_LIB PYTORCH_CUDA_ALLOC_CONF
check "numtrace --version" bash -c "numtrace --version | grep -q '^numtrace [0-9]'"
check "run uses the installed library" bash -c \
  "numtrace run -o envcheck -- sh -c 'echo \$LD_PRELOAD' | grep -qx '$p/lib/libnumtrace.so'"
check "run puts the installed hooks on PYTHONPATH for python" bash -c \
  "numtrace run -o pycheck -- python3 -c 'import os; print(os.environ[\"PYTHONPATH\"])' | grep -qx '$p/share/numtrace/hooks'"
check "run captures the simulated job" bash -c \
  "numtrace run -o runA --steps 1 --label A -- numtrace-sim --steps 2 2>&1 >/dev/null | grep -q 'rank 0: 15 kernels captured, complete'"
check "run captures a changed job" bash -c \
  "numtrace run -o runB --steps 1 --label B -- numtrace-sim --steps 2 --perturb 2 >/dev/null"
check "numtrace diff finds the divergence (exit 1)" bash -c \
  "numtrace diff runA runB --json s.json; test \$? -eq 1 && grep -q '\"verdict\":\"diverged\"' s.json"
check "numtrace-diff installed alone works" bash -c "numtrace-diff runA runA -q"
check "numtrace show lists the trace" bash -c "numtrace show runA/rank_0.ntrace.jsonl --seq 0..2 | grep -q '3 of 15 kernels shown'"
check "doctor finds the installed library" bash -c \
  "numtrace doctor -o . >doc.txt; grep -q 'libnumtrace.so loads   ok     $p/lib/libnumtrace.so' doc.txt"

# The Debian package.
if command -v dpkg-deb >/dev/null && command -v dpkg-shlibdeps >/dev/null; then
  (cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; exit 1; }
  deb="$(ls "$tmp"/pkg/numtrace_*.deb)"
  dpkg-deb -f "$deb" Depends >"$tmp/depends.txt"
  check "deb depends on Abseil, simdjson and libc" bash -c \
    "grep -q 'libabsl' $tmp/depends.txt && grep -q 'libsimdjson' $tmp/depends.txt && grep -q 'libc6' $tmp/depends.txt"
  check "deb recommends python3" bash -c "dpkg-deb -f '$deb' Recommends | grep -q python3"
  dpkg-deb -c "$deb" >"$tmp/contents.txt"
  for f in ./usr/bin/numtrace ./usr/bin/numtrace-diff ./usr/lib/libnumtrace.so ./usr/include/numtrace.h \
           ./usr/share/numtrace/hooks/sitecustomize.py ./usr/share/doc/numtrace/README.md; do
    check "deb holds $f" grep -q " $f\$" "$tmp/contents.txt"
  done
  dpkg-deb -x "$deb" "$tmp/root"
  check "the unpacked package runs" bash -c "'$tmp/root/usr/bin/numtrace' doctor -o . | grep -q '$tmp/root/usr/lib/libnumtrace.so'"
else
  echo "install_test: dpkg-deb/dpkg-shlibdeps missing: Debian package checks skipped"
fi
echo "install_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
