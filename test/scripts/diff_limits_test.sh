#!/usr/bin/env bash
# numtrace-diff under hostile input and a memory limit (issue 8, item 2):
# inputs far larger than the address-space limit are read in bounded memory;
# /dev/zero, a binary file, a line over the cap, a symlink loop, an output
# over an input: exit 2 with one line and its own words; a gzip-compressed
# trace reads like the plain one.
# Usage: diff_limits_test.sh BIN_DIR   (holds numtrace-diff and numtrace-sim)
set -uo pipefail
bin="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_error RC_WANTED WORDS -- command...: exit code and one stderr line holding WORDS
expect_error() {
  local want="$1" words="$2"; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = "$want" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF -- "$words" "$tmp/err"; then ok
  else bad "$* -> rc $rc (want $want), stderr: $(head -c 300 "$tmp/err")"; fi
}

NUMTRACE_OUTPUT_DIR="$tmp/A" NUMTRACE_STEPS=all "$bin/numtrace-sim" --steps 20 >/dev/null 2>&1
NUMTRACE_OUTPUT_DIR="$tmp/B" NUMTRACE_STEPS=all "$bin/numtrace-sim" --steps 20 --perturb 1 >/dev/null 2>&1
a="$tmp/A/rank_0.ntrace.jsonl" b="$tmp/B/rank_0.ntrace.jsonl"
[ -s "$a" ] && [ -s "$b" ] || { echo "FAIL: numtrace-sim wrote no traces"; exit 1; }

# 1. Inputs of 2 x 130 MB (records of a later version, 1 MB each, which the
# reader skips) under a 100 MB address-space limit: mapping them whole, as
# the reader did, cannot work; streaming does.
pad="$(head -c 1000000 /dev/zero | tr '\0' a)"
for side in a b; do
  src="$a"; [ "$side" = b ] && src="$b"
  { head -n 1 "$src"
    for _ in $(seq 130); do printf '{"type":"x-padding","pad":"%s"}\n' "$pad"; done
    tail -n +2 "$src"; } >"$tmp/big_$side.ntrace.jsonl"
done
unset pad
(ulimit -v 100000; "$bin/numtrace-diff" "$tmp/big_a.ntrace.jsonl" "$tmp/big_b.ntrace.jsonl" --quiet) 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && ok || bad "big pair under ulimit -v 100000: rc $rc (want 1, diverged): $(head -c 300 "$tmp/err")"
rm -f "$tmp"/big_*.ntrace.jsonl

# 2. Out of memory is one line naming the file, never an abort: at every
# limit from just above what the loader needs, the diff either fits (exit 1)
# or says so in one line (exit 2).
for limit in 10000 12000 15000 20000 25000 30000 40000; do
  (ulimit -v "$limit"; "$bin/numtrace-diff" "$a" "$b" --quiet) >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "out of memory" "$tmp/err"; then ok
  elif [ "$rc" = 1 ] && [ ! -s "$tmp/err" ]; then ok   # fits
  else bad "ulimit -v $limit: rc $rc: $(head -c 300 "$tmp/err")"; fi
done

# 3. Not text, too long, loops, ranges.
expect_error 2 "binary data (a NUL byte at byte 0)" -- timeout 20 "$bin/numtrace-diff" /dev/zero "$a"
expect_error 2 "binary data" -- "$bin/numtrace-diff" "$bin/numtrace-sim" "$a"
{ head -n 1 "$a"; head -c 20000000 /dev/zero | tr '\0' ' '; echo; } >"$tmp/long.ntrace.jsonl"
expect_error 2 "a line longer than 16 MiB" -- "$bin/numtrace-diff" "$tmp/long.ntrace.jsonl" "$a"
ln -s "$tmp/loop2" "$tmp/loop1"; ln -s "$tmp/loop1" "$tmp/loop2"
expect_error 2 "a symlink loop" -- "$bin/numtrace-diff" "$tmp/loop1" "$a"
sed '2s/"seq":0,/"seq":99999999999999999999,/' "$a" >"$tmp/range.ntrace.jsonl"
expect_error 2 "seq: number out of range" -- "$bin/numtrace-diff" "$tmp/range.ntrace.jsonl" "$a"
sed '2s/"l2":[0-9.e+-]*/"l2":1e999/' "$a" >"$tmp/range.ntrace.jsonl"
expect_error 2 "l2: number out of range" -- "$bin/numtrace-diff" "$tmp/range.ntrace.jsonl" "$a"

# 4. gzip: the same answer as the plain file; a BOM is skipped.
gzip -c "$a" >"$tmp/a.ntrace.jsonl.gz"
"$bin/numtrace-diff" "$a" "$b" --json "$tmp/plain.json" >/dev/null 2>&1; rc_plain=$?
"$bin/numtrace-diff" "$tmp/a.ntrace.jsonl.gz" "$b" --json "$tmp/gz.json" >/dev/null 2>"$tmp/err"; rc_gz=$?
if [ "$rc_plain" = "$rc_gz" ] && [ "$rc_gz" = 1 ] &&
   [ "$(grep -o '"first_divergence":{[^}]*}' "$tmp/plain.json" | sed 's/"path":"[^"]*"//g')" = \
     "$(grep -o '"first_divergence":{[^}]*}' "$tmp/gz.json" | sed 's/"path":"[^"]*"//g')" ]; then ok
else bad "gzip trace: rc $rc_gz vs plain $rc_plain: $(head -c 300 "$tmp/err")"; fi
{ printf '\xef\xbb\xbf'; cat "$a"; } >"$tmp/bom.ntrace.jsonl"
"$bin/numtrace-diff" "$tmp/bom.ntrace.jsonl" "$a" --quiet 2>"$tmp/err"; rc=$?
[ "$rc" = 0 ] && ok || bad "BOM trace vs itself: rc $rc: $(head -c 300 "$tmp/err")"

# 5. Outputs: never an input, never a device, never a file that appeared.
cp "$a" "$tmp/keep.ntrace.jsonl"
expect_error 2 "would overwrite the input" -- "$bin/numtrace-diff" "$a" "$b" -o "$a" --force
expect_error 2 "would overwrite the input" -- "$bin/numtrace-diff" "$tmp/A" "$tmp/B" --json "$a" --force
expect_error 2 "not a regular file" -- "$bin/numtrace-diff" "$a" "$b" -o /dev/full --force
cmp -s "$a" "$tmp/keep.ntrace.jsonl" && ok || bad "an input changed"
"$bin/numtrace-diff" "$a" "$b" --json - >"$tmp/stdout.json" 2>/dev/null
[ "$(head -c 10 "$tmp/stdout.json")" = '{"format":' ] && ok || bad "--json - is not JSON on stdout: $(head -c 100 "$tmp/stdout.json")"
(ulimit -f 1; trap '' XFSZ; "$bin/numtrace-diff" "$a" "$b" -o "$tmp/r.html") >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ -z "$(ls -A "$tmp" | grep -e '\.tmp\.' -e '^r\.html$')" ]; then ok
else bad "write error: rc $rc, left: $(ls -A "$tmp"), $(head -c 300 "$tmp/err")"; fi

echo "diff_limits_test: $passes passed, $fails failed"
[ "$fails" = 0 ]
