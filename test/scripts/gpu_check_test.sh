#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU: every part's dry run ends in seconds with
# clean skip rows on stdout and two files in OUT (the device tool brings back
# at most 8); each part's step limits fit its budget; a hang, a spent budget
# and a TERM still leave the table packed in the archive, within the budget.
# Also test/gpu/check_trace.py (what gpu-check reads from traces, with a JSON
# parser) and the check scripts' step marks under the hooks.
#   gpu_check_test.sh SOURCE_DIR FAKE_NUMTRACE_SO [BUILD_DIR]
# (with BUILD_DIR, check_trace.py also reads real traces of numtrace-sim).
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
src="$(cd "$1" && pwd)" fake="$2" build="${3:+$(cd "$3" && pwd)}"
check="$src/scripts/gpu-check.sh"
tmp="$(mktemp -d)"; trap '[ -n "${GPU_CHECK_TEST_KEEP:-}" ] || rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
# run NAME PART ENV...: one part in a clean environment (no torch, no GPU),
# OUT and the work folder under $tmp/NAME; its stdout, status and seconds kept.
run() {
  local name=$1 part=$2; shift 2
  mkdir -p "$tmp/$name/out" "$tmp/$name/work"
  local t0; t0=$(date +%s)
  env -i PATH=/usr/bin:/bin HOME="$tmp" PYTHONDONTWRITEBYTECODE=1 OUT="$tmp/$name/out" NUMTRACE_CHECK_WORK="$tmp/$name/work" "$@" \
    bash "$check" --part "$part" >"$tmp/$name/stdout" 2>"$tmp/$name/stderr"
  echo $? >"$tmp/$name/rc"
  echo $(($(date +%s) - t0)) >"$tmp/$name/secs"
}
rc() { cat "$tmp/$1/rc"; }
secs() { cat "$tmp/$1/secs"; }
files() { find "$tmp/$1/out" -type f | wc -l; }
# The archive's copy of the table.
packed_table() { tar xzf "$tmp/$1/out/gpu-check-part$2.tar.gz" -O "gpu-check-part$2.txt" 2>/dev/null; }

# --- every part's limits fit its budget ---------------------------------------
# One device call may take 290 s, packing included: the default budget, less
# the packing reserve, bounds the sum of each part's step limits - summed
# here from the table itself, not taken from the script's own verdict.
table_text() { sed -n '/^limits_table()/,/^EOF/p' "$check"; }
budget=$(sed -n 's/^budget=\${NUMTRACE_CHECK_BUDGET_S:-\([0-9]*\)}$/\1/p' "$check")
reserve=$(sed -n 's/^reserve=\([0-9]*\)$/\1/p' "$check")
# The parts: every digit of the table's PARTS column.
parts=$(table_text | awk '$1 ~ /^[0-9]+c?$/ { for (i = 1; i <= length($1); i++) if (substr($1, i, 1) ~ /[0-9]/) print substr($1, i, 1) }' | sort -u | tr '\n' ' ')
[ "$budget" = 290 ] && [ -n "$reserve" ] && ok || bad "default budget '$budget' s (want 290), reserve '$reserve'"
[ "$(wc -w <<<"$parts")" -ge 2 ] && ok || bad "parts '$parts' read from the limits table"
bash "$check" --budget >"$tmp/budget" 2>&1
for p in $parts; do
  sum=$(table_text | awk -v p="$p" '$1 ~ /^[0-9]+c?$/ && $1 !~ /c$/ && index($1, p) { s += $3 } END { print s + 0 }')
  [ "$sum" -gt 0 ] && [ "$sum" -le $((budget - reserve)) ] && ok ||
    bad "part $p: its limits sum to $sum s, over $budget s less $reserve s packing"
  grep -q "^part $p  sum of limits $sum s, budget $budget s less $reserve s packing: fits" "$tmp/budget" && ok ||
    bad "--budget disagrees for part $p: $(grep "^part $p  sum" "$tmp/budget")"
  # The environment's nvidia-smi runs in every part.
  table_text | awk -v p="$p" '$2 == "nvidia-smi" && index($1, p) { f = 1 } END { exit !f }' && ok ||
    bad "part $p runs nvidia-smi but the table does not count it there"
done
[ "$(grep -c '^part [0-9]*  sum of limits' "$tmp/budget")" = "$(wc -w <<<"$parts")" ] && ok || bad "--budget does not list every part"
env -i PATH=/usr/bin:/bin bash "$check" --part 9 /dev/null >/dev/null 2>&1; r=$?
[ $r -eq 2 ] && ok || bad "--part 9: exit $r, want 2"
# Every step the script runs has a limit in the table ...
for s in $(grep -oE '^ *(STEP_ERR="[^"]*" )?(step|stepbt|traced) [a-z][a-z0-9_-]*' "$check" | awk '{print $NF}' | sort -u); do
  grep -qE "^[0-9c]+ +$s +[0-9]+ " <(table_text) && ok || bad "step $s has no limit"
done
# ... counted in the part whose functions (partN_*) run it.
while read -r p s; do
  table_text | awk -v p="$p" -v s="$s" '$2 == s && index($1, p) { f = 1 } END { exit !f }' && ok ||
    bad "step $s runs in part $p, but the table counts it in part(s) $(table_text | awk -v s="$s" '$2 == s { print $1 }')"
done < <(awk '/^part[0-9]_[a-z0-9_]*\(\) \{/ { p = substr($1, 5, 1) } /^}/ { p = "" }
  p != "" && match($0, /(^ *|then |; |&& )(STEP_ERR="[^"]*" )?(step|stepbt|traced|gtest_rows) [a-z][a-z0-9_-]*/) {
    n = split(substr($0, RSTART, RLENGTH), w, " "); print p, w[n] }' "$check" | sort -u)

# --- the dry runs -------------------------------------------------------------
for p in $parts; do
  run "dry$p" $p
  [ "$(rc dry$p)" = 0 ] && ok || bad "dry run part $p exit $(rc dry$p): $(cat "$tmp/dry$p/stderr")"
  [ "$(secs dry$p)" -le 10 ] && ok || bad "dry run part $p took $(secs dry$p) s"
  [ "$(files dry$p)" -eq 2 ] && ok || bad "part $p: $(files dry$p) files in OUT, want the table and the archive"
  table="$tmp/dry$p/out/gpu-check-part$p.txt"
  # Every row on stdout as made, the same as the table; no fail row.
  [ -s "$table" ] && [ "$(grep -c . "$table")" -ge 3 ] && ok || bad "part $p: table has $(grep -c . "$table") rows"
  grep -vE '^numtrace gpu-check part' "$tmp/dry$p/stdout" | cmp -s - "$table" && ok || bad "part $p: stdout rows differ from the table"
  grep -qE '^gpu +skip +no GPU' "$table" && ok || bad "part $p: no skip row for the GPU"
  ! grep -qE '^.{44,} fail  ' "$table" && ok || bad "part $p: fail rows: $(grep -E '^.{44,} fail  ' "$table")"
  [ "$(grep -cE '^.{44} skip ' "$table")" -ge 2 ] && ok || bad "part $p: fewer than 2 skip rows"
  packed_table "dry$p" $p | cmp -s - "$table" && ok || bad "part $p: the archive lacks the table"
  tar tzf "$tmp/dry$p/out/gpu-check-part$p.tar.gz" | grep '^logs/nvidia-smi.log$' >/dev/null && ok || bad "part $p: no logs in the archive"
done
[ -z "$(ls -A "$tmp/dry1/work" 2>/dev/null | grep -v -e logs -e traces -e reports -e 'gpu-check-part1.txt' -e '^sum-')" ] && ok ||
  bad "unexpected files in the work folder: $(ls "$tmp/dry1/work")"
# Bad usage: no part.
env -i PATH=/usr/bin:/bin bash "$check" >/dev/null 2>"$tmp/usage.err"; r=$?
[ $r -eq 2 ] && grep -q -- '--part' "$tmp/usage.err" && ok || bad "no --part: exit $r"
# A limit that is not seconds: refused before anything runs.
env -i PATH=/usr/bin:/bin NUMTRACE_CHECK_LIMITS="nosync=ten" bash "$check" --part 1 "$tmp/badlimit" >/dev/null 2>"$tmp/limit.err"; r=$?
[ $r -eq 2 ] && grep -q 'nosync=ten' "$tmp/limit.err" && [ ! -e "$tmp/badlimit" ] && ok || bad "bad NUMTRACE_CHECK_LIMITS: exit $r"
# An override shows in --budget.
NUMTRACE_CHECK_LIMITS="torch-compile=150" bash "$check" --budget --part 2 | grep -E '^part 2  torch-compile +150 s' >/dev/null && ok ||
  bad "--budget ignores NUMTRACE_CHECK_LIMITS"

# --- a hang in a capture: backtrace, rerun, the budget holds ----------------
# FORCE_GPU runs the GPU rows here (they fail fast: no GPU, no torch); the
# train step under numtrace sleeps instead and times out after 3 s.
run hang 1 NUMTRACE_CHECK_FORCE_GPU=1 NUMTRACE_CHECK_SIMULATE_HANG=step-shim \
  NUMTRACE_CHECK_LIMITS="step-shim=3 step-noact=3" NUMTRACE_CHECK_BUDGET_S=60
t="$tmp/hang/out/gpu-check-part1.txt"
[ "$(rc hang)" = 1 ] && ok || bad "hang: exit $(rc hang), want 1"
[ "$(secs hang)" -le 60 ] && ok || bad "hang: took $(secs hang) s past its 60 s budget"
grep -qE '^torch train step under numtrace +fail +timed out' "$t" && ok || bad "hang: no timed-out row: $(cat "$t")"
grep -qE '^torch train step, NUMTRACE_ACTIVITY=0 +fail' "$t" && ok || bad "hang: no rerun row"
tar tzf "$tmp/hang/out/gpu-check-part1.tar.gz" | grep '^logs/step-shim.log.bt$' >/dev/null && ok || bad "hang: no backtrace log packed"
[ "$(files hang)" -le 8 ] && ok || bad "hang: $(files hang) files in OUT"

# --- a hang that spends the budget: later rows read "out of time" -----------
run spent 1 NUMTRACE_CHECK_FORCE_GPU=1 NUMTRACE_CHECK_SIMULATE_HANG=step-plain \
  NUMTRACE_CHECK_LIMITS="step-plain=12" NUMTRACE_CHECK_BUDGET_S=30
t="$tmp/spent/out/gpu-check-part1.txt"
[ "$(secs spent)" -le 30 ] && ok || bad "spent: took $(secs spent) s past its 30 s budget"
grep -qE '^torch train step under numtrace +skip +out of time' "$t" && ok || bad "spent: the next step did not read out of time: $(cat "$t")"
grep -qE '^no-sync 20 steps, all captured +skip +out of time' "$t" && ok || bad "spent: no-sync not out of time"
packed_table spent 1 | cmp -s - "$t" && ok || bad "spent: the archive lacks the final table"

# --- TERM while a step hangs: the table packed at once ------------------------
mkdir -p "$tmp/term/out" "$tmp/term/work"
env -i PATH=/usr/bin:/bin HOME="$tmp" PYTHONDONTWRITEBYTECODE=1 OUT="$tmp/term/out" NUMTRACE_CHECK_WORK="$tmp/term/work" \
  NUMTRACE_CHECK_FORCE_GPU=1 NUMTRACE_CHECK_SIMULATE_HANG=torch-import bash "$check" --part 1 >"$tmp/term/stdout" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q '^gpu ' "$tmp/term/stdout" 2>/dev/null && break; sleep 0.1; done
sleep 1
t0=$(date +%s)
kill -TERM $pid
wait $pid; r=$?
took=$(($(date +%s) - t0))
t="$tmp/term/out/gpu-check-part1.txt"
[ $r -eq 143 ] && ok || bad "TERM: exit $r, want 143"
[ $took -le 8 ] && ok || bad "TERM: took $took s to end"
grep -qE '^gpu-check part 1 +fail +terminated' "$t" && ok || bad "TERM: no terminated row: $(cat "$t")"
packed_table term 1 | grep 'terminated' >/dev/null && ok || bad "TERM: the archive's table lacks the terminated row"
grep -q 'terminated' "$tmp/term/stdout" && ok || bad "TERM: the row is not on stdout"
[ "$(find "$tmp/term/out" -type f | wc -l)" -eq 2 ] && ok || bad "TERM: files in OUT: $(ls "$tmp/term/out")"

# --- check_trace.py: a trace read with a JSON parser ------------------------
ct="$src/test/gpu/check_trace.py"
cat >"$tmp/t.ntrace.jsonl" <<'EOF'
{"type":"header","format":"numtrace-trace","version":1}
{"type":"kernel","seq":0,"step":1,"name":"ampere_bf16_s16816gemm","buffers":[{"arg":0,"bytes":8388608,"dtype":"bf16"}]}
{"type":"kernel","seq":1,"step":1,"name":"triton_poi_fused_add_0","buffers":[{"arg":0,"bytes":64,"dtype":"raw"}]}
{"type":"kernel","seq":2,"step":2,"name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","buffers":[]}
{"type":"note","launch":3,"level":"warn","msg":"tensor map attached (torch 2.11)"}
{"type":"digest","step":2,"kernels":3,"hash":"0000000000000000","nonfinite":null}
{"type":"footer","kernels":3,"launches":4,"dropped":0,"unmeasured":1,"counters":{"ring_bytes":67108864,"contexts_failed":0,"kernels_unmeasured":1},"status":"complete"}
{"type":"kernel","seq":3,"na
EOF
python3 "$ct" summary "$tmp/t.ntrace.jsonl" >"$tmp/sum" 2>&1
for kv in footer=yes bad_lines=1 kernel_records=3 steps=2 gemm=1 triton=1 nccl=1 nccl_buffers=0 bf16=1 typed_gemm=1 \
          typed_triton=0 w8388608=1 digests=1 digest_kernels=3 counter.ring_bytes=67108864 unmeasured=1 dropped=0 \
          'note_tensor_map=tensor map attached (torch 2.11)'; do
  grep -qxF "$kv" "$tmp/sum" && ok || bad "check_trace summary: no '$kv' in: $(tr '\n' ' ' <"$tmp/sum")"
done
f=$(grep '^footer_row=' "$tmp/sum")
[ "$f" = "footer_row=info unmeasured=1 ring_bytes=67108864 kernels_unmeasured=1" ] && ok || bad "check_trace footer: '$f'"
grep -qx 'provenance_eager=fail kernels 3, with scope 0%, .*' "$tmp/sum" && ok || bad "check_trace provenance: $(grep '^provenance' "$tmp/sum")"
for kv in level=kernels op_records=0 op_buffers.cuda=0 digests_lost=0 note_op_unmeasured=; do
  grep -qxF "$kv" "$tmp/sum" && ok || bad "check_trace summary (kernel level): no '$kv'"
done
# Operator level: buffers per device, measured when their stats hash every
# element of the shape (not n 0, not without a hash); the
# digests' lost calls; the note of tensors left out.
cat >"$tmp/ops.ntrace.jsonl" <<'EOF'
{"type":"header","format":"numtrace-trace","version":1,"capture":{"level":"ops","watch":"full"}}
{"type":"kernel","seq":0,"launch":0,"step":1,"level":"op","name":"aten::addmm","buffers":[{"arg":0,"bytes":64,"dtype":"f32","shape":[4,4],"device":"cuda:0","stats":{"n":16,"hash":"00000000000000aa"}},{"arg":1,"bytes":64,"dtype":"f32","shape":[4,4],"device":"cuda:0","stats":{"n":0,"hash":"0000000000000000"}},{"arg":2,"bytes":8,"dtype":"f32","shape":[2],"device":"cpu","stats":{"n":2,"hash":"00000000000000bb"}},{"arg":3,"bytes":8,"dtype":"f32","shape":[2],"device":"cuda:0","stats":{"n":2}}]}
{"type":"kernel","seq":1,"launch":1,"step":1,"name":"not_an_op","buffers":[{"arg":0,"bytes":4,"device":"cuda:1","stats":{}}]}
{"type":"note","launch":1,"level":"warn","msg":"operator level: tensors on cuda:0 (non-contiguous) are not measured (left out of the records)"}
{"type":"digest","step":0,"kernels":5,"hash":"0000000000000000","nonfinite":null,"lost":2}
{"type":"digest","step":1,"kernels":5,"hash":"0000000000000000","nonfinite":null}
{"type":"footer","kernels":2,"launches":10,"dropped":0,"unmeasured":0,"counters":{},"status":"complete"}
EOF
python3 "$ct" summary "$tmp/ops.ntrace.jsonl" >"$tmp/opssum" 2>&1
for kv in level=ops op_records=1 op_buffers.cuda=3 op_measured.cuda=1 op_buffers.cpu=1 op_measured.cpu=1 digests=2 \
          digest_kernels=10 digests_lost=2 \
          'note_op_unmeasured=operator level: tensors on cuda:0 (non-contiguous) are not measured (left out of the records)'; do
  grep -qxF "$kv" "$tmp/opssum" && ok || bad "check_trace summary (operator level): no '$kv' in: $(tr '\n' ' ' <"$tmp/opssum")"
done
head -3 "$tmp/t.ntrace.jsonl" >"$tmp/cut.ntrace.jsonl"
python3 "$ct" summary "$tmp/cut.ntrace.jsonl" >"$tmp/cutsum"
grep -qx 'footer_row=fail no footer (the run was cut short)' "$tmp/cutsum" && grep -qx footer=no "$tmp/cutsum" && ok ||
  bad "check_trace footer of a cut trace: $(grep '^footer' "$tmp/cutsum")"
echo '{"verdict":"identical","first_divergence":{"a_name":"k1"},"warnings":[]}' >"$tmp/d.json"
[ "$(python3 "$ct" find "$tmp/d.json" a_name)" = '"k1"' ] && [ "$(python3 "$ct" find "$tmp/d.json" warnings)" = '[]' ] &&
  [ -z "$(python3 "$ct" find "$tmp/d.json" absent)" ] && [ "$(python3 "$ct" find "$tmp/d.json" first_divergence.a_name)" = '"k1"' ] &&
  [ -z "$(python3 "$ct" find "$tmp/d.json" first_divergence.absent)" ] && [ -z "$(python3 "$ct" find "$tmp/d.json" verdict.a_name)" ] &&
  ok || bad "check_trace find"
python3 "$ct" summary "$tmp/none" >/dev/null 2>"$tmp/err"; r=$?
[ $r -eq 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok || bad "check_trace on a missing file: exit $r"

# Real traces (the simulated loop through the engine and the writer): the
# fields gpu-check reads are where check_trace.py looks for them.
if [ -n "$build" ] && [ -x "$build/bin/numtrace-sim" ] && [ -x "$build/bin/numtrace" ]; then
  (cd "$tmp" && "$build/bin/numtrace" run -o sim --steps 2 -- "$build/bin/numtrace-sim" --steps 4 &&
     "$build/bin/numtrace" run -o simw --watch=full --steps 2 -- "$build/bin/numtrace-sim" --steps 6 &&
     "$build/bin/numtrace-diff" simw simw --json simw.json --force --quiet) >"$tmp/sim.log" 2>&1 ||
    bad "numtrace-sim runs: $(tail -3 "$tmp/sim.log")"
  python3 "$ct" summary "$tmp/sim/rank_0.ntrace.jsonl" >"$tmp/simsum"
  grep -qx footer=yes "$tmp/simsum" && grep -qx dropped=0 "$tmp/simsum" && grep -qx steps=1 "$tmp/simsum" &&
    grep -qx 'counter.ring_bytes=[0-9]*' "$tmp/simsum" && grep -qx 'counter.kernels_unmeasured=0' "$tmp/simsum" &&
    grep -qx 'footer_row=info unmeasured=0' "$tmp/simsum" && grep -q '^provenance_eager=pass ' "$tmp/simsum" &&
    [ "$(grep '^kernel_records=' "$tmp/simsum" | cut -d= -f2)" -gt 0 ] && ok ||
    bad "sim trace summary: $(tr '\n' ' ' <"$tmp/simsum")"
  python3 "$ct" summary "$tmp/simw/rank_0.ntrace.jsonl" | grep -x digests=6 >/dev/null && ok || bad "sim watch trace: not 6 digests"
  [ "$(python3 "$ct" find "$tmp/simw.json" verdict)" = '"identical"' ] && ok || bad "sim watch diff verdict"
  ! python3 "$ct" strings "$tmp/simw.json" | grep suspect >/dev/null && ok || bad "sim watch diff: suspect digests"
else
  echo "gpu_check_test: no numtrace-sim in '${build:-no build dir}': real traces not read"
fi

# --- step marks: none from the check scripts under the hooks ------------------
# The hooks mark a step after optimizer.step(); the scripts' own marks must
# then be off (NUMTRACE_CHECK_NO_MARK=1), or each iteration is two steps and
# the captured one holds no kernel.
for flag in 0 1; do
  rm -f "$tmp/marks"
  env LD_PRELOAD="$fake" FAKE_NUMTRACE_LOG="$tmp/marks" NUMTRACE_CHECK_NO_MARK=$flag \
    python3 -c "import sys; sys.path.insert(0, '$src/test/gpu'); import torch_checks; torch_checks.mark_step()"
  n=$(grep -c '^mark_step' "$tmp/marks" 2>/dev/null); n=${n:-0}
  want=1; [ $flag = 1 ] && want=0
  [ "$n" = $want ] && ok || bad "NUMTRACE_CHECK_NO_MARK=$flag: $n marks, want $want"
done
# Every row gpu-check runs under the hooks turns the scripts' marks off.
n=$(grep -c 'PYTHONPATH="$hooks' "$check")
[ "$n" = 2 ] && ok || bad "PYTHONPATH=\$hooks outside hooks_env and the fake tensor map row: $n uses"
grep -q 'hooks_env=(PYTHONPATH="$hooks${PYTHONPATH:+:$PYTHONPATH}" NUMTRACE_LIB_PATH="$lib" NUMTRACE_CHECK_NO_MARK=1)' "$check" &&
  ok || bad "hooks_env does not set NUMTRACE_CHECK_NO_MARK=1"

echo "gpu_check_test: $passed passed, $failed failed"
[ $failed -eq 0 ]
