#!/usr/bin/env bash
# Fuzzes the importers and the diff behind them: configures a separate clang
# build (build-fuzz/, ASan + UBSan + libFuzzer; only the analyzer libraries
# the fuzz targets need are built), then runs each
# fuzz target for SECONDS (default 15) on a scratch copy of its seed corpus
# (test/fuzz/corpus/<target>/). Exit status is non-zero if any target found a
# crash; the reproducer is left in build-fuzz/artifacts/.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
secs="${1:-15}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${NUMTRACE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

. "$root/scripts/compiler-cache.sh" "$root"
CC=clang CXX=clang++ cmake --no-warn-unused-cli -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${compiler_cache[@]}" \
  -DNUMTRACE_BUILD_FUZZ=ON -DNUMTRACE_BUILD_TESTS=OFF -DNUMTRACE_BUILD_BENCH=OFF \
  -DNUMTRACE_WITH_CUDA=OFF "-DCMAKE_C_FLAGS=$san" "-DCMAKE_CXX_FLAGS=$san" >/dev/null
cmake --build "$build" --target trace_reader_fuzz debugmode_reader_fuzz diff_fuzz -j "$(nproc)"

mkdir -p "$build/artifacts"
# The targets fuzz side by side (each for SECONDS of wall time, sharing the
# cores), so a short run costs SECONDS, not three times SECONDS.
fuzz_one() {
  local target="$1" work rc=0
  work="$(mktemp -d)"
  cp -r "$root/test/fuzz/corpus/$target/." "$work/"
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" UBSAN_OPTIONS="print_stacktrace=1" \
    "$build/bin/${target}_fuzz" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "$work" \
    >"$build/artifacts/$target.log" 2>&1 || rc=$?
  rm -rf "$work"
  return "$rc"
}
targets=(trace_reader debugmode_reader diff)
pids=()
echo "== fuzzing ${targets[*]} for ${secs}s"
for target in "${targets[@]}"; do
  fuzz_one "$target" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  target="${targets[$i]}"
  if ! wait "${pids[$i]}"; then
    echo "FAILED: $target (see $build/artifacts/$target.log)"
    tail -n 40 "$build/artifacts/$target.log"
    status=1
  else
    echo "$target: $(grep -E "stat::number_of_executed_runs" "$build/artifacts/$target.log" | tail -n 1)"
  fi
done
exit "$status"
