#!/usr/bin/env bash
# numtrace run as a process among processes: the job's streams and status are
# the job's. Each check is the issue's repro (issue 15) run for real:
# stdout untouched, closed or broken stdout survived, options after the
# command passed on, SIGTERM/SIGHUP/SIGINT/SIGQUIT sent to numtrace forwarded
# to the job, a signal death reported as one, a process outliving the job said.
#   process_test.sh BUILD_BIN_DIR
set -uo pipefail
bin="$(cd "$1" && pwd)"
nt="$bin/numtrace"
tmp="$(mktemp -d)"
# A job left running by a failure (orphaned: the very bug) is killed, so a
# failing run never holds the test's pipes open.
cleanup() { for f in "$tmp"/jobpid.*; do [ -e "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# 1. stdout is the job's: the listing goes to stderr (`cat blob > copy`).
head -c 100000 /dev/urandom >"$tmp/blob"
"$nt" run -o "$tmp/c" -- cat "$tmp/blob" >"$tmp/copy" 2>"$tmp/c.err"
cmp -s "$tmp/blob" "$tmp/copy" && ok || bad "the job's stdout was changed ($(wc -c <"$tmp/copy") bytes for 100000)"
grep -q "no trace was written" "$tmp/c.err" && ok || bad "the listing is not on stderr: $(cat "$tmp/c.err")"

# 2. A broken pipe on stdout: numtrace passes the job's status, not 141.
"$nt" run -o "$tmp/p" -- sh -c 'yes | head -c 1000000; exit 3' 2>/dev/null | true
rc=${PIPESTATUS[0]}
[ "$rc" = 3 ] && ok || bad "with a broken stdout numtrace exited $rc, the job 3"
# ... and a closed one.
"$nt" run -o "$tmp/q" -- sh -c 'exit 4' >&- 2>/dev/null
rc=$?
[ "$rc" = 4 ] && ok || bad "with a closed stdout numtrace exited $rc, the job 4"

# 3. Options after the command are the command's.
"$nt" run -o "$tmp/o" sh -c 'echo "$NUMTRACE_STEPS:$*"' x --steps 3 >"$tmp/o.out" 2>/dev/null
[ "$(cat "$tmp/o.out")" = ":--steps 3" ] && ok || bad "options after the command: $(cat "$tmp/o.out")"

# 4. A signal sent to numtrace alone reaches the job; numtrace reports it and
#    exits with the job's status. The job traps the signal to prove it got it.
# Job control on: a background job of a script would otherwise start with
# SIGINT ignored (and a job may not trap what it started ignoring).
set -m
for sig in TERM HUP INT QUIT; do
  rm -f "$tmp/got" "$tmp/ready"
  "$nt" run -o "$tmp/s$sig" -- sh -c "echo \$\$ > $tmp/jobpid.$sig; trap 'echo $sig > $tmp/got; exit 7' $sig; touch $tmp/ready; for i in \$(seq 200); do sleep 0.05; done" \
      2>"$tmp/s.err" &
  pid=$!
  for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
  kill -s "$sig" "$pid"
  wait "$pid"; rc=$?
  [ "$(cat "$tmp/got" 2>/dev/null)" = "$sig" ] && ok || bad "SIG$sig was not forwarded to the job"
  [ "$rc" = 7 ] && ok || bad "after SIG$sig numtrace exited $rc, the job 7"
done
# The job dies of the signal: said as such, 128+N passed on.
rm -f "$tmp/ready"
"$nt" run -o "$tmp/k" -- sh -c "echo \$\$ > $tmp/jobpid.k; touch $tmp/ready; exec sleep 10" 2>"$tmp/k.err" &
pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
sleep 0.2  # past the exec
kill -TERM "$pid"; wait "$pid"; rc=$?
[ "$rc" = 143 ] && ok || bad "a job killed by SIGTERM: numtrace exited $rc"
# nohup: a SIGHUP numtrace started ignoring is ignored by the job too.
rm -f "$tmp/ready" "$tmp/done"
nohup "$nt" run -o "$tmp/h" -- sh -c "touch $tmp/ready; sleep 1; touch $tmp/done" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
kill -HUP "$pid"; wait "$pid"; rc=$?
[ "$rc" = 0 ] && [ -e "$tmp/done" ] && ok || bad "under nohup a SIGHUP ended the job ($rc)"
grep -q "the job was killed by signal 15 (SIGTERM)" "$tmp/k.err" && ok || bad "signal death words: $(cat "$tmp/k.err")"

# A shell job's child gets the signal too (`run -- sh -c 'python train.py;
# ...'` once left the python running after numtrace exited 143), and
# numtrace returns only once that child has ended: here it takes half a
# second over its TERM trap, and its mark is there when numtrace is gone.
rm -f "$tmp/ready" "$tmp/child_done"
printf '%s\n' "trap 'sleep 0.5; touch $tmp/child_done; exit 0' TERM" 'echo $$ > '"$tmp/jobpid.child" \
  "touch $tmp/ready" 'while :; do sleep 0.05; done' >"$tmp/child.sh"
"$nt" run -o "$tmp/t" -- sh -c "sh $tmp/child.sh; echo after" >"$tmp/t.out" 2>"$tmp/t.err" &
pid=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
kill -TERM "$pid"; wait "$pid"; rc=$?
[ -e "$tmp/child_done" ] && ok || bad "the shell job's child did not get SIGTERM, or numtrace ended before it did"
kill -0 "$(cat "$tmp/jobpid.child")" 2>/dev/null && bad "the shell job's child still runs after numtrace ended" || ok
[ "$rc" = 143 ] && ! grep -q after "$tmp/t.out" && ok || bad "the shell job: numtrace exited $rc, output '$(cat "$tmp/t.out")'"

set +m

# 5. A process that outlives the job (a forked daemon) is said, not "nothing".
"$nt" run -o "$tmp/f" -- sh -c "(sleep 2; touch $tmp/late) & exit 0" 2>"$tmp/f.err"
grep -q "1 process of the job still running after it ended" "$tmp/f.err" && ok || bad "outliving child: $(cat "$tmp/f.err")"

# 6. Commands that cannot run: 127 and 126, as a shell.
"$nt" run -o "$tmp/n1" -- no-such-program-xyz 2>/dev/null; rc=$?
[ "$rc" = 127 ] && ok || bad "command not found: $rc"
printf '#!/bin/sh\n' >"$tmp/noexec"
"$nt" run -o "$tmp/n2" -- "$tmp/noexec" 2>/dev/null; rc=$?
[ "$rc" = 126 ] && ok || bad "command not executable: $rc"

# 7. A write that fails (a full disk; here a file size limit) names its
#    reason in the shim's line instead of only leaving a cut trace.
( ulimit -f 4; trap '' XFSZ
  NUMTRACE_OUTPUT_DIR="$tmp/w" NUMTRACE_STEPS=all "$bin/numtrace-sim" --steps 2 >/dev/null 2>"$tmp/w.err" )
grep -q "failed (File too large); the trace ends here" "$tmp/w.err" && ok || bad "write failure words: $(head -c 300 "$tmp/w.err")"

# 8. Whether the job started CUDA is known, not guessed (issue 24): a job
#    that never reaches cuInit is told so; one whose process is called at
#    cuInit by the driver (InitializeInjection, called here by hand: no GPU)
#    is not, and the listing counts it. The private directory is removed.
if command -v python3 >/dev/null; then
  TMPDIR="$tmp" "$nt" run -o "$tmp/nc" -- python3 -c 'print(1)' >/dev/null 2>"$tmp/nc.err"
  grep -q "the job never started CUDA" "$tmp/nc.err" && ok || bad "no-CUDA job: $(cat "$tmp/nc.err")"
  TMPDIR="$tmp" "$nt" run -o "$tmp/ci" -- python3 -c 'import ctypes; ctypes.CDLL(None).InitializeInjection()' \
    >/dev/null 2>"$tmp/ci.err"
  grep -q "1 process of the job started CUDA" "$tmp/ci.err" && ! grep -q "never started CUDA" "$tmp/ci.err" \
    && ok || bad "cuInit job: $(cat "$tmp/ci.err")"
  ls -d "$tmp"/numtrace-run-* >/dev/null 2>&1 && bad "numtrace run left its state directory in TMPDIR" || ok
fi

# 9. --version on every installed binary (and the bench generator).
for b in numtrace numtrace-diff numtrace-sim numtrace-make-pair; do
  v="$("$bin/$b" --version 2>&1)"; rc=$?
  [ "$rc" = 0 ] && [[ "$v" =~ ^$b\ [0-9]+\.[0-9]+ ]] && ok || bad "$b --version: rc=$rc '$v'"
done

echo "process_test: $passed passed, $failed failed"
[ "$failed" = 0 ]
