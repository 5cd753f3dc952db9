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
status=0
for target in trace_reader debugmode_reader diff; do
  work="$(mktemp -d)"
  cp -r "$root/test/fuzz/corpus/$target/." "$work/"
  echo "== fuzzing $target for ${secs}s"
  if ! ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" UBSAN_OPTIONS="print_stacktrace=1" \
      "$build/bin/${target}_fuzz" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "$work" \
      >"$build/artifacts/$target.log" 2>&1; then
    echo "FAILED: $target (see $build/artifacts/$target.log)"
    tail -n 40 "$build/artifacts/$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_runs|cov:" "$build/artifacts/$target.log" | tail -n 2
  fi
  rm -rf "$work"
done
exit "$status"
