#!/usr/bin/env bash
# Watch mode through the command line, as docs/walkthroughs.md shows it for
# two different commands: `numtrace run --watch` on each side (300 steps, B
# perturbed only at step 137), `numtrace diff`, then the two capture commands
# the summary prints, run as printed, and their diff: the full capture's first
# divergence is the launch the step finder named. Also: the NaN path
# (--nan-at-step 211 in B), identical runs exit 0, at most 64 bytes a launch.
set -euo pipefail
src="$1" bin="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
sim="$bin/bin/numtrace-sim"
export PATH="$bin/bin:$PATH"  # the printed commands call `numtrace`
fail() { echo "watch_loop_test: $*" >&2; exit 1; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); exec('print(' + sys.argv[2] + ')')" "$@"; }
cd "$tmp"
numtrace run -o wa --watch --label A -- "$sim" --steps 300 >/dev/null
numtrace run -o wb --watch --label B -- "$sim" --steps 300 --perturb 2 --perturb-step 137 >/dev/null
rc=0; numtrace diff wa wb --json s.json -o r.html --color never >diff.txt || rc=$?
[ "$rc" = 1 ] || fail "watch diff exit $rc, expected 1: $(cat diff.txt)"
[ "$(field s.json "d['steps']['first_differing']")" = 137 ] || fail "first differing step: $(cat diff.txt)"
index="$(field s.json "d['steps']['first_kernel']['index']")"
grep -q "first differing step: 137" diff.txt || fail "terminal: $(cat diff.txt)"
grep -q '"strip":{"steps":\[0,1,2,' r.html || fail "the HTML report has no step strip"
# At most 64 bytes a launch (300 steps of 15 launches).
bytes="$(stat -c %s wa/rank_0.ntrace.jsonl)"
[ "$bytes" -le $((64 * 300 * 15)) ] || fail "$bytes bytes for 4500 launches"
# The printed commands, as printed (terminal and JSON agree).
grep -A2 "capture step 137 in full" diff.txt | tail -2 | sed 's/^ *//' >cmds.sh
[ "$(sed -n 1p cmds.sh)" = "$(field s.json "d['steps']['capture']")" ] || fail "terminal and JSON commands differ"
bash cmds.sh >/dev/null
rc=0; numtrace diff wa-step137 wb-step137 --json full.json --color never >full.txt || rc=$?
[ "$rc" = 1 ] || fail "full capture diff exit $rc: $(cat full.txt)"
[ "$(field full.json "d['first_divergence']['a_seq']")" = "$index" ] ||
  fail "full capture's first divergence is not launch $index of step 137: $(cat full.txt)"
# Identical runs: identical, exit 0.
numtrace run -o wa2 --watch -- "$sim" --steps 300 >/dev/null
numtrace diff wa wa2 --json same.json --quiet || fail "identical watch runs did not exit 0"
[ "$(field same.json "d['verdict']")" = identical ] || fail "identical runs: $(field same.json "d['verdict']")"
# The NaN path.
numtrace run -o wn --watch -- "$sim" --steps 300 --nan-at-step 211 >/dev/null
rc=0; numtrace diff wa2 wn --json nan.json --quiet || rc=$?
[ "$rc" = 1 ] || fail "NaN run exit $rc"
[ "$(field nan.json "d['steps']['first_nonfinite']['b']['step']")" = 211 ] || fail "first NaN step of B"
[ "$(field nan.json "d['steps']['first_nonfinite']['a']")" = None ] || fail "A has no NaN"
# A run resumed from a checkpoint (steps numbered by the job's count, as the
# hooks send an optimizer's): paired with A's steps of the same number, its
# printed capture command captures the step it names.
numtrace run -o ra --watch -- "$sim" --steps 40 >/dev/null
numtrace run -o rb --watch -- "$sim" --steps 40 --resume-at 10 --perturb 2 --perturb-step 17 >/dev/null
rc=0; numtrace diff ra rb --json res.json --color never >res.txt 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "resumed diff exit $rc: $(cat res.txt)"
[ "$(field res.json "d['steps']['first_differing']")" = 17 ] || fail "resumed: first differing step: $(cat res.txt)"
grep -q "30 compared by digest" res.txt || fail "resumed: steps 10-39 not paired with A's: $(cat res.txt)"
grep -q "step numbers do not line up: 10 steps of A" res.txt || fail "resumed: no note: $(cat res.txt)"
grep -A2 "capture step 17 in full" res.txt | tail -2 | sed 's/^ *//' >rcmds.sh
bash rcmds.sh >/dev/null
rc=0; numtrace diff ra-step17 rb-step17 --json rfull.json --color never >rfull.txt || rc=$?
[ "$rc" = 1 ] && [ "$(field rfull.json "d['first_divergence']['a_seq']")" = 3 ] ||
  fail "the resumed run's step 17 in full: $(cat rfull.txt)"
# A bad mode is refused before the job starts: exit 2, one line naming the option.
rc=0; numtrace run -o bad --watch=every -- "$sim" --steps 2 >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] || fail "bad --watch exit $rc"
grep -q -- "--watch" err.txt || fail "bad --watch message: $(cat err.txt)"
[ ! -e bad/rank_0.ntrace.jsonl ] || fail "a trace was written despite the bad option"
echo "watch_loop_test: ok ($bytes bytes, $((bytes / 4500)) per launch)"
