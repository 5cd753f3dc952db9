#!/usr/bin/env bash
# Issue 15's hostile repros through the real binaries and the real shim
# (the simulated loop): a second run dumping into the same directory gets its
# own pid's names and leaves the first dump's bytes alone; --tensors of a
# directory holding both refuses; fifos, /dev/zero and links to it are
# refused at once (never a hang) with one line; `twice` never writes its
# summary through a link; `show` survives a 50,000-character kernel name.
set -euo pipefail
src="$1" bin="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
sim="$bin/bin/numtrace-sim"
nt="$bin/bin/numtrace"
diff="$bin/bin/numtrace-diff"
fail() { echo "no_overwrite_test: $*" >&2; exit 1; }
cd "$tmp"

# Two captures dumping seq 3 into one directory.
NUMTRACE_OUTPUT_DIR=r1 NUMTRACE_STEPS=2 NUMTRACE_DUMP=seq:3 "$sim" --steps 4 >/dev/null
[ -f r1/dump_0_3.json ] || fail "first run: no r1/dump_0_3.json: $(ls r1)"
before="$(cat r1/dump_0_3.json r1/dump_0_3.arg* | md5sum)"
NUMTRACE_OUTPUT_DIR=r2 NUMTRACE_STEPS=2 NUMTRACE_DUMP=seq:3 NUMTRACE_DUMP_DIR="$tmp/r1" \
  "$sim" --steps 4 --perturb 2 --perturb-step 2 --perturb-ulps 1048576 >/dev/null 2>err.txt
side=$(ls r1 | grep -E '^dump_0_3\.pid[0-9]+\.json$' || true)
[ -n "$side" ] || fail "second run: no dump_0_3.pid<P>.json in r1: $(ls r1) $(cat err.txt)"
stem="${side%.json}"
grep -q "\"after\":\"$stem.arg" "r1/$side" || fail "the pid sidecar names other arrays: $(cat "r1/$side")"
[ "$(cat r1/dump_0_3.json r1/dump_0_3.arg* | md5sum)" = "$before" ] || fail "the first dump was rewritten"
rc=0; "$diff" --tensors r1 r1 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "holds 2 dumps" err.txt || fail "--tensors of a directory with two dumps: exit $rc: $(cat err.txt)"
rc=0; "$diff" --tensors r1/dump_0_3.json "r1/$side" -q || rc=$?
[ "$rc" = 1 ] || fail "--tensors of the two named sidecars: exit $rc, expected 1 (the perturbed run differs)"

# Inputs that are no regular file: refused at once, one line, exit 2.
mkfifo fifo.npy fifo.json
ln -s /dev/zero zero.npy
one_line() {  # EXPECTED-WORDS COMMAND...
  local words="$1" rc=0; shift
  timeout 20 "$@" >/dev/null 2>err.txt || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q -- "$words" err.txt ||
    fail "$*: exit $rc, stderr: $(cat err.txt)"
}
one_line "the override file is a character device" "$diff" r1/rank_0.ntrace.jsonl r2/rank_0.ntrace.jsonl --override /dev/zero
one_line "the .npy array is a fifo" "$diff" --tensors fifo.npy fifo.npy
one_line "the .npy array is a character device" "$diff" --tensors zero.npy zero.npy
one_line "the diff summary is a character device" "$nt" run -o fd --dump-first-divergence /dev/zero --side a -- true
one_line "the diff summary is a fifo" "$nt" run -o fd --dump-first-divergence fifo.json --side a -- true

# twice -o DIR --force with DIR/summary.json linked onto a trace.
mkdir hunt
cp r1/rank_0.ntrace.jsonl keep.jsonl
ln -s "$tmp/keep.jsonl" hunt/summary.json
one_line "names a symbolic link" "$nt" twice -o hunt --force -- "$sim" --steps 2
cmp -s keep.jsonl r1/rank_0.ntrace.jsonl || fail "twice wrote through hunt/summary.json"
[ ! -e hunt/run1 ] || fail "twice ran a job before refusing"

# show --kernel on a 50,000-character kernel name (std::regex crashed: 139).
python3 - <<'PY'
import json
name = "void " + "k" * 50000 + "_gemm<float>()"
buf = {"arg": 1, "addr": "0x1000", "offset": 0, "bytes": 4, "dtype": "f32", "dtype_from": "name", "role": "out",
       "stats": {"n": 1, "nan": 0, "inf": 0, "ninf": 0, "zero": 0, "sub": 0, "min": 1, "max": 1, "sum": 1,
                 "l1": 1, "l2": 1, "hash": "00000000000000aa"}}
with open("long.ntrace.jsonl", "w") as f:
    f.write(json.dumps({"type": "header", "format": "numtrace-trace", "version": 1, "producer": "t",
                        "run": {"label": "x", "argv": ["x"], "pid": 1, "rank": 0, "world_size": 1, "host": "h",
                                "start_time": "2026-11-29T11:00:00Z"}}) + "\n")
    f.write(json.dumps({"type": "kernel", "seq": 0, "launch": 0, "step": 0, "name": name, "stream": 7,
                        "grid": [1, 1, 1], "block": [1, 1, 1], "buffers": [buf]}) + "\n")
    f.write(json.dumps({"type": "footer", "kernels": 1, "launches": 1, "dropped": 0, "unmeasured": 0,
                        "status": "complete", "end_time": "2026-11-29T11:30:00Z"}) + "\n")
PY
rc=0; "$nt" show long.ntrace.jsonl --kernel 'k.*gemm' >show.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && grep -q "1 of 1 kernels shown" show.txt || fail "show --kernel on a long name: exit $rc $(cat err.txt)"
gzip -k long.ntrace.jsonl
[ "$("$nt" show long.ntrace.jsonl.gz --json | wc -l)" = 1 ] || fail "show FILE.gz --json printed no record"
echo "no_overwrite_test: ok"
