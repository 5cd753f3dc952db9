#!/usr/bin/env bash
# Builds numtrace here and collects into gpu-bundle/ (git-ignored) everything
# the GPU session needs; that machine has no Debian packages and no network.
# gpu-bundle/ travels as a carried path beside the working tree, the two
# together under the device tool's 64 MiB: this script fails above 48 MiB
# together. Then, there (docs/gpu.md, "Running the GPU check"):
#   bash gpu-bundle/gpu-check.sh --part 1 $OUT      then a second call with --part 2
#
#   scripts/gpu-bundle.sh [BUILD_DIR]     (default: build-gpu-bundle/)
#
# Layout: bin/ (numtrace-diff wrapper + .real, sample programs, GPU test and
# bench binaries), lib/ (libnumtrace.so, Debian libraries numtrace-diff
# needs), scripts/ (gpu-check.sh, numtrace, hooks/), test/ (the torch scripts
# and check_trace.py, which reads the traces).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-gpu-bundle}"
out="$root/gpu-bundle"

say() { echo "gpu-bundle: $*"; }

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# One target at a time: a broken target of another area must not hide the rest.
targets=(numtrace numtrace-diff numtrace-cli numtrace_gpu_samples shim_gpu_test device_bench
         shim_cupti_test shim_preload_quiet_test gpu_reduce_kernels_test cupti_holder numtrace_callback_probe
         fake_numtrace)
missing=()
for t in "${targets[@]}"; do
  if ! cmake --build "$build" --target "$t" -j "$(nproc)" >"$build/bundle-$t.log" 2>&1; then
    missing+=("$t")
    say "WARNING: target $t did not build (see $build/bundle-$t.log)"
  fi
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/scripts" "$out/test"

copy_if() { [ -e "$1" ] && cp "$1" "$2" || say "WARNING: missing $1"; }
copy_if "$build/lib/libnumtrace.so" "$out/lib/"
for p in mlp_train empty_kernels device_bench shim_gpu_test shim_cupti_test gpu_reduce_kernels_test cupti_holder callback_probe \
         libfake_numtrace.so; do
  copy_if "$build/test-bin/$p" "$out/bin/"
done

# A command of ours (numtrace-diff, numtrace): the binary as NAME.real, the
# non-glibc shared libraries it needs in lib/ (the GPU machine has none of our
# Debian packages), and NAME, a wrapper that points the loader at lib/.
bundle_command() {
  local name="$1"
  cp "$build/bin/$name" "$out/bin/$name.real"
  ldd "$build/bin/$name" | awk '/=> \// {print $3}' | while read -r so; do
    case "$(basename "$so")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      *) cp -L "$so" "$out/lib/" ;;
    esac
  done
  cat >"$out/bin/$name" <<WRAP
#!/bin/sh
here="\$(cd "\$(dirname "\$0")" && pwd)"
LD_LIBRARY_PATH="\$here/../lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/$name.real" "\$@"
WRAP
  chmod +x "$out/bin/$name"
}

if [ -e "$build/bin/numtrace-diff" ]; then
  bundle_command numtrace-diff
else
  say "WARNING: numtrace-diff missing: diff checks will fail"
fi

# The numtrace command sits beside lib/ as when installed, so it finds
# lib/libnumtrace.so and share/numtrace/hooks relative to itself.
if [ -e "$build/bin/numtrace" ]; then
  bundle_command numtrace
  mkdir -p "$out/share/numtrace/hooks"
  # The build's copy of the installed hooks (launcher/CMakeLists.txt's one list).
  cp "$build/share/numtrace/hooks/"* "$out/share/numtrace/hooks/"
else
  say "WARNING: numtrace missing: doctor/twice/across-ranks checks will fail"
fi

cp "$root/scripts/gpu-check.sh" "$out/scripts/"
cp "$root/scripts/gpu-check.sh" "$out/"  # run as gpu-bundle/gpu-check.sh
cp -r "$root/scripts/hooks" "$out/scripts/" 2>/dev/null || true
cp "$root/test/gpu/torch_transformer.py" "$root/test/gpu/replica_train.py" \
  "$root/test/gpu/torch_checks.py" "$root/test/gpu/pointer_probe.py" "$root/test/gpu/tensor_map_check.py" \
  "$root/test/gpu/check_trace.py" "$out/test/"
git -C "$root" rev-parse HEAD >"$out/COMMIT" 2>/dev/null || echo unknown >"$out/COMMIT"

# libnumtrace.so must load with only glibc, libstdc++ and the driver.
bad=$(readelf -d "$out/lib/libnumtrace.so" 2>/dev/null | awk '/NEEDED/ {gsub(/[\[\]]/, "", $5); print $5}' |
      grep -Ev '^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so|^ld-linux' || true)
[ -z "$bad" ] || { say "ERROR: libnumtrace.so needs $bad"; exit 1; }
# The oldest glibc each binary accepts (the GPU machine must have at least this).
for f in "$out/lib/libnumtrace.so" "$out"/bin/*; do
  file "$f" 2>/dev/null | grep -q ELF || continue
  v=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
  echo "${v#GLIBC_} $(basename "$f")"
done >"$out/GLIBC_REQUIRED"
# What travels to the device machine: the working tree (tracked files and
# untracked ones git does not ignore) plus gpu-bundle/; the tool refuses
# more than 64 MiB, and the GPU check needs nothing else.
size_kib=$(du -sk "$out" | cut -f1)
tree_kib=$(( $( (cd "$root" && git ls-files -z --cached --others --exclude-standard 2>/dev/null |
                 xargs -0 stat -c %s 2>/dev/null) | awk '{ s += $1 } END { print s + 0 }') / 1024 ))
say "bundle $out: $((size_kib / 1024)) MiB, working tree $((tree_kib / 1024)) MiB, $(((size_kib + tree_kib) / 1024)) MiB travel of the 64 allowed; needs glibc >= $(sort -V "$out/GLIBC_REQUIRED" | tail -1 | cut -d' ' -f1)"
[ $((size_kib + tree_kib)) -le $((48 * 1024)) ] || { say "ERROR: bundle and working tree over 48 MiB together (the device tool takes 64)"; exit 1; }
[ ${#missing[@]} -eq 0 ] || { say "built without: ${missing[*]}"; exit 1; }
