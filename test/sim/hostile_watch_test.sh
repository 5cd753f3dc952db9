#!/usr/bin/env bash
# Watch mode, the step finder and their printed follow-up under hostile use
# (issue 28, notes/hostile-round4): each check is one finding of that note,
# run as a user runs it, with the answer the tool must give. Every failing
# check is reported; the exit status is 1 when any failed.
set -uo pipefail
src="$1" bin="$2"
tmp="$(mktemp -d)"; trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
sim="$bin/bin/numtrace-sim"
export PATH="$bin/bin:$PATH"  # the printed commands call `numtrace`
failed=0 passed=0
check() {  # check NAME CONDITION-COMMAND...
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "hostile_watch_test: FAIL: $name" >&2; failed=$((failed + 1)); fi
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); exec('print(' + sys.argv[2] + ')')" "$@"; }
export -f field
cd "$tmp"

# 1. A full writer queue never costs the trace: kernel_name definitions are
# kept, the trace reads, and the diff says it is incomplete.
NUMTRACE_QUEUE_RECORDS=8 numtrace run -o q8 --watch --steps 0-2 -- "$sim" --steps 5 >/dev/null 2>&1
rc=0; numtrace show q8/rank_0.ntrace.jsonl >show.txt 2>&1 || rc=$?
check "queue: show reads a trace that lost records (rc $rc: $(tail -1 show.txt))" [ "$rc" = 0 ]
rc=0; numtrace diff q8 q8 --strict >d.txt 2>&1 || rc=$?
check "queue: diff reads it and calls it incomplete (rc $rc: $(tail -1 d.txt))" \
  bash -c "[ $rc = 1 ] && grep -q 'records dropped' d.txt"

# 2. The full capture of the named step keeps every launch of it.
numtrace run -o a --watch --steps 0 --launch-count 2 -- "$sim" --steps 10 >/dev/null 2>&1
numtrace run -o b --watch --steps 0 --launch-count 2 -- "$sim" --steps 10 --perturb 2 --perturb-step 5 >/dev/null 2>&1
numtrace diff a b --color never >w.txt 2>&1
grep -A3 "capture step 5 in full" w.txt | tail -3 | sed 's/^ *//' >cmds.sh
check "window: the commands drop --launch-count ($(cat cmds.sh))" bash -c "! grep -q -- --launch-count cmds.sh"
check "window: one line says what was left out" grep -q "without --launch-count 2" w.txt
bash cmds.sh >/dev/null 2>&1; rc=$?
check "window: the printed diff of the full captures diverges (rc $rc)" [ "$rc" = 1 ]

# 3. Two traces in one directory: one output directory per side.
numtrace run -o ddp --watch -- sh -c "RANK=0 '$sim' --steps 10 & RANK=1 '$sim' --steps 10 --perturb 2 --perturb-step 6; wait" \
  >/dev/null 2>&1
numtrace diff ddp/rank_0.ntrace.jsonl ddp/rank_1.ntrace.jsonl --color never >ddp.txt 2>&1
grep -A3 "capture step 6 in full" ddp.txt | tail -3 | sed 's/^ *//' >ddp.sh
check "shared dir: the two sides write two directories, rank 0 against rank 1 ($(tr '\n' '|' <ddp.sh))" \
  bash -c "[ \"\$(sed -n 3p ddp.sh)\" = 'numtrace diff ddp-step6-a/rank_0.ntrace.jsonl ddp-step6-b/rank_1.ntrace.jsonl' ]"
check "shared dir: the commands re-run the whole job (numtrace run's job.command), not one worker" \
  bash -c "sed -n 1p ddp.sh | grep -q -- '-- sh -c ' && ! grep -q \"workers' own command lines\" ddp.txt"
bash ddp.sh >/dev/null 2>&1; rc=$?
check "shared dir: the printed commands find the difference again (rc $rc)" [ "$rc" = 1 ]

# 7. --across-ranks on watch traces: two ranks cannot outvote each other
# (said, not a clean bill by silence); never agreement over nothing.
rc=0; numtrace-diff --across-ranks ddp >ar.txt 2>&1 || rc=$?
check "across-ranks on two watch ranks: exit 0 and the note (rc $rc: $(cat ar.txt))" \
  bash -c "[ $rc = 0 ] && grep -q 'neither can be outvoted' ar.txt"
mkdir mixed && cp ddp/rank_0.ntrace.jsonl mixed/
RANK=1 NUMTRACE_STEPS=0 NUMTRACE_OUTPUT_DIR=mixed "$sim" --steps 2 >/dev/null
rc=0; numtrace-diff --across-ranks mixed >am.txt 2>&1 || rc=$?
check "across-ranks, a rank without digests: one line, exit 2 (rc $rc: $(cat am.txt))" \
  bash -c "[ $rc = 2 ] && [ \$(wc -l <am.txt) = 1 ] && grep -q 'nothing was compared' am.txt"

# 4. --min-bytes changes the digests: said.
numtrace run -o m0 --watch -- "$sim" --steps 10 >/dev/null 2>&1
numtrace run -o m4k --watch --min-bytes 4k -- "$sim" --steps 10 >/dev/null 2>&1
numtrace diff m0 m4k --color never >m.txt 2>&1
check "min-bytes: a note says the digests cannot match" grep -q "min-bytes 4k: the buffers below it are left out of the digests" m.txt

# 5. Runs of different lengths are neither identical nor complete.
numtrace run -o l30 --watch -- "$sim" --steps 30 >/dev/null 2>&1
numtrace run -o l20 --watch -- "$sim" --steps 20 >/dev/null 2>&1
rc=0; numtrace diff l30 l20 --strict --json l.json >/dev/null 2>&1 || rc=$?
check "lengths: --strict fails (rc $rc)" [ "$rc" = 1 ]
check "lengths: not identical, not complete ($(field l.json "d['verdict'], d['complete']"))" \
  bash -c "[ \"\$(field l.json \"d['verdict'] != 'identical' and not d['complete']\")\" = True ]"

# 11. No step number in common (a resumed run): the reason, not "no kernel records".
python3 - <<'PY'
import json, os
out = []
for l in open('l30/rank_0.ntrace.jsonl').read().splitlines():
    r = json.loads(l)
    if r['type'] == 'digest':
        r['step'] += 100
    out.append(json.dumps(r, separators=(',', ':')))
os.makedirs('shifted', exist_ok=True)
open('shifted/rank_0.ntrace.jsonl', 'w').write('\n'.join(out) + '\n')
PY
rc=0; numtrace diff l30 shifted >sh.txt 2>&1 || rc=$?
check "no common step: one line naming the steps (rc $rc: $(cat sh.txt))" \
  bash -c "[ $rc = 2 ] && grep -q 'no step number is in both traces' sh.txt"

# 10. Different captured steps: said.
numtrace run -o w13 --watch --steps 13 -- "$sim" --steps 20 >/dev/null 2>&1
numtrace run -o w14 --watch --steps 14 -- "$sim" --steps 20 >/dev/null 2>&1
numtrace diff w13 w14 --color never >w1314.txt 2>&1
check "steps 13 vs 14: said" grep -q "A captured step 13 in full, B step 14" w1314.txt

# 6. --hooks-log judged before the job.
cp -r l30 victim
before="$(md5sum victim/rank_0.ntrace.jsonl)"
echo keep >precious.txt; ln -s precious.txt hllink; mkdir hldir
for log in victim/rank_0.ntrace.jsonl hv2/log.txt hllink hldir missing/dir/log; do
  rc=0; numtrace run -o "hv-${log//\//_}" --steps 1 --hooks-log "$log" -- "$sim" --steps 3 >hl.txt 2>&1 || rc=$?
  check "hooks-log $log: refused before the job (rc $rc: $(cat hl.txt))" \
    bash -c "[ $rc = 2 ] && [ ! -e 'hv-${log//\//_}/rank_0.ntrace.jsonl' ] && grep -q -- --hooks-log hl.txt"
done
rc=0; numtrace run -o hv2 --steps 1 --hooks-log hv2/rank_0.ntrace.jsonl -- "$sim" --steps 3 >/dev/null 2>&1 || rc=$?
check "hooks-log inside -o: refused (rc $rc)" [ "$rc" = 2 ]
check "hooks-log: the trace and the link's target untouched" \
  bash -c "[ \"\$(md5sum victim/rank_0.ntrace.jsonl)\" = '$before' ] && [ \"\$(cat precious.txt)\" = keep ]"
rc=0; numtrace run -o hvok --steps 1 --hooks-log ok.log -- "$sim" --steps 3 >/dev/null 2>&1 || rc=$?
check "hooks-log to a fresh file: accepted (rc $rc)" [ "$rc" = 0 ]

# 8. An output directory the job cannot write: refused before the job.
mkdir rodir
if mount -t tmpfs -o size=1m,ro tmpfs rodir 2>/dev/null; then
  rc=0; numtrace run -o rodir --watch -- "$sim" --steps 3 >ro.txt 2>&1 || rc=$?
  umount rodir
  check "read-only -o: refused before the job (rc $rc: $(head -1 ro.txt))" \
    bash -c "[ $rc = 2 ] && [ \$(wc -l <ro.txt) = 1 ] && grep -q 'could not write' ro.txt"
else
  echo "hostile_watch_test: read-only -o not checked (no tmpfs mount here)"
fi

# 9 and 2. twice: NUMTRACE_WATCH from the environment hunts; the second pass keeps every launch.
rc=0; NUMTRACE_WATCH=full numtrace twice -o envhunt -- "$sim" --steps 5 --nondeterministic >env.txt 2>&1 || rc=$?
check "twice with NUMTRACE_WATCH=full hunts (rc $rc)" bash -c "[ $rc = 1 ] && grep -q 'first differing step' env.txt"
rc=0; numtrace twice -o hunt --watch --kernel-name softmax -- "$sim" --steps 5 --nondeterministic >hunt.txt 2>&1 || rc=$?
check "twice --watch --kernel-name: the full capture does not say 'did not recur' (rc $rc)" \
  bash -c "[ $rc = 1 ] && ! grep -q 'did not recur' hunt.txt && grep -q 'leaves out --kernel-name softmax' hunt.txt"

# 12. twice --force on an earlier hunt: one line that does not advise the flag given.
rc=0; numtrace twice -o hunt --force --watch -- "$sim" --steps 3 >force.txt 2>&1 || rc=$?
check "twice --force on a hunt: refused without advising --force (rc $rc: $(cat force.txt))" \
  bash -c "[ $rc = 2 ] && ! grep -q 'or --force' force.txt && grep -q 'earlier hunt' force.txt"

# 15. show and the zero counters.
numtrace show m0/rank_0.ntrace.jsonl >show0.txt 2>&1
check "show: no empty step list" bash -c "! grep -q 'captured steps:;' show0.txt"
numtrace run -o p1 --steps 1 -- "$sim" --steps 3 >/dev/null 2>&1
numtrace run -o p2 --steps 1 -- "$sim" --steps 3 >/dev/null 2>&1
numtrace diff p1/rank_0.ntrace.jsonl p2/rank_0.ntrace.jsonl --color never >c.txt 2>&1
numtrace diff p1/rank_0.ntrace.jsonl p2/rank_0.ntrace.jsonl --color never --verbose >cv.txt 2>&1
check "counters at 0 hidden unless --verbose" \
  bash -c "! grep -q 'counters:.* 0\(,\|\$\)' c.txt && grep -q 'counters:.* 0' cv.txt"

# 14. Printed commands pass exact bytes: a newline argument comes back a newline.
numtrace run -o n1 --watch -- "$sim" --steps 6 >/dev/null 2>&1
# (The job's own command is what the printed commands re-run: its $0 here.)
numtrace run -o n2 --watch -- bash -c 'exec "$1" --steps 6 --perturb 1 --perturb-step 4' "$(printf 'line1\nline2\tx')" \
  "$sim" >/dev/null 2>&1
numtrace diff n1 n2 --json n.json --color never >n.txt 2>&1
cmd="$(field n.json "d['steps']['capture_b']")"
check "newline argument quoted as \$'...\\x0a...' ($cmd)" grep -qF -- "--perturb-step 4' \$'line1\\x0aline2\\x09x' " <<<"$cmd"
check "terminal and JSON commands agree" grep -qF -- "$cmd" n.txt
# 14. Byte 0xFF in the process's own argv (no numtrace run: the header's argv
# is what the command is rebuilt from) comes back as $'\xff', not as 'ÿ'.
mkdir ff && (cd ff && NUMTRACE_WATCH=full bash -c 'exec -a "$(printf "sim\xff\xfe")" "$0" --steps 6 --perturb 1 --perturb-step 4' \
  "$sim" >/dev/null 2>&1)
numtrace diff n1 ff/numtrace --json ff.json --color never >ff.txt 2>&1
cmd="$(field ff.json "d['steps']['capture_b']")"
check "byte 0xFF in argv printed as \$'sim\\xff\\xfe' ($cmd)" grep -qF -- "-- \$'sim\xff\xfe' --steps 6" <<<"$cmd"

# 1 (listing): a trace that dropped records is never listed "complete".
NUMTRACE_QUEUE_RECORDS=8 numtrace run -o q8b --watch --steps 0-2 -- "$sim" --steps 5 >/dev/null 2>listing.txt
check "listing: dropped records are not 'complete' ($(tail -1 listing.txt))" \
  bash -c "grep -q 'INCOMPLETE: [0-9]* records dropped' listing.txt && ! grep -q 'complete, ' listing.txt"

# 12. A watch trace cut before its first digest record is named as such,
# not as a trace "not captured with --watch".
numtrace run -o l12 --watch -- "$sim" --steps 12 >/dev/null 2>&1
python3 -c "import os,sys; s=open('l12/rank_0.ntrace.jsonl','rb').read(); i=s.find(b'{\"type\":\"kernel_name\",\"id\":5'); os.makedirs('cutname'); open('cutname/rank_0.ntrace.jsonl','wb').write(s[:i+30])"
rc=0; numtrace diff l12 cutname >cut.txt 2>&1 || rc=$?
check "cut before the first digest: said (rc $rc: $(tail -1 cut.txt))" \
  bash -c "[ $rc = 2 ] && grep -q 'cutname/rank_0.ntrace.jsonl was captured with --watch but holds no step digest (cut short' cut.txt"
# 12. Full against sampled digests of small buffers agree: the note says so.
numtrace run -o ws12 --watch=sampled -- "$sim" --steps 12 >/dev/null 2>&1
numtrace diff l12 ws12 >ws.txt 2>&1
check "full vs sampled: the note does not say they cannot match ($(grep note ws.txt))" \
  bash -c "grep -q \"B 'sampled': they agree\" ws.txt && ! grep -q 'cannot match' ws.txt"
# 12. A step hash that is not the fold of its launch digests is said, not a difference at launch 0.
python3 - <<'PY'
import json, os
out = []
for line in open('l12/rank_0.ntrace.jsonl').read().splitlines():
    r = json.loads(line)
    if r['type'] == 'digest' and r['step'] == 5:
        r['hash'] = '0123456789abcdef'
        line = json.dumps(r, separators=(',', ':'))
    out.append(line)
os.makedirs('sh')
open('sh/rank_0.ntrace.jsonl', 'w').write('\n'.join(out) + '\n')
PY
numtrace diff l12 sh >sh.txt 2>&1
check "step hash not the fold: noted, no differing step ($(grep -c differ sh.txt))" \
  bash -c "grep -q 'have a step hash that is not the fold of their launch digests' sh.txt && ! grep -q 'first differing step' sh.txt"

# 12. A full disk during twice --watch's step capture stops the hunt with
# that cause, before the second job runs (needs root for a small tmpfs).
mkdir full
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=96k tmpfs full 2>/dev/null; then
  rc=0; numtrace twice -o full/hunt --watch -- "$sim" --steps 40 --nondeterministic >ft.out 2>ft.err || rc=$?
  umount full
  check "full disk: the hunt stops naming it (rc $rc: $(tail -1 ft.err))" \
    bash -c "[ $rc = 2 ] && tail -1 ft.err | grep -q 'its file system is full, so its trace is cut short' &&
             ! grep -q 'capture step 0 in full, run 2' ft.out"
else
  echo "hostile_watch_test: full disk check skipped (needs root to mount a small tmpfs)"
fi

echo "hostile_watch_test: $passed passed, $failed failed"
[ "$failed" = 0 ]
