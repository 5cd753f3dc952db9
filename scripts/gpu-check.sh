#!/usr/bin/env bash
# The GPU session's checks, in two device calls, run from the bundle
# scripts/gpu-bundle.sh made (no Debian packages, no network there):
#
#   gpu-bundle/gpu-check.sh --part 1 [RESULTS_DIR]   the hardware questions
#   gpu-bundle/gpu-check.sh --part 2 [RESULTS_DIR]   figures, torch/compile, provenance, dump, watch
#   gpu-bundle/gpu-check.sh --part 3 [RESULTS_DIR]   operator level on CUDA, allocators, reduce-overhead, the tensor map's torch side
#   gpu-bundle/gpu-check.sh --part 4 [RESULTS_DIR]   pause/trim, watch cost, doctor, torch.profiler, 2 ranks
#   gpu-bundle/gpu-check.sh --budget [--part N]      the step limits and their sums; runs nothing
#
# (also gpu-bundle/scripts/gpu-check.sh, and scripts/gpu-check.sh in the
# source tree for a dry run). Each part prints every row on stdout as it is
# made - check, pass/fail/skip/info, reason or figure - and appends it to
# RESULTS_DIR/gpu-check-partN.txt (default: $OUT, else ./gpu-check-out).
# Logs, traces and reports (logs/STEP.log, traces/STEP/, reports/) go to a
# work folder outside RESULTS_DIR ($NUMTRACE_CHECK_WORK, kept; else a new
# /tmp/numtrace-gpu-check.*, removed at exit), packed into
# RESULTS_DIR/gpu-check-partN.tar.gz after each section and on exit, TERM or
# INT (the traces only at the end, while the archive stays under 15 MiB):
# RESULTS_DIR holds two files per part (the device tool brings back 8).
#
# Time: the part ends within NUMTRACE_CHECK_BUDGET_S (default 290), its
# packing included. Every step runs under its own limit (the table below:
# realistic costs on the H200 - torch import 5-15 s, a cold torch.compile
# 30-90 s - with a margin; each part's limits sum to at most its budget less
# the packing reserve, test/scripts/gpu_check_test.sh holds every part to
# it), and a step whose limit no longer fits in the time left is not
# started: its rows read `skip` "out of time". Parts 3 and 4 are for later
# leases: parts 1 and 2 answer the questions that block everything else. A capture that times out
# gets a backtrace of every thread while time is left (cuda-gdb, else gdb).
# docs/gpu.md says what each row answers and what to change and rerun.
#
# Knobs: NUMTRACE_CHECK_BUDGET_S; NUMTRACE_CHECK_LIMITS="step=s step=s" (a
# step's limit); NUMTRACE_CHECK_FORCE_GPU=1 (run the GPU rows without
# nvidia-smi); NUMTRACE_CHECK_OPS_DEVICE=cpu (the operator-level rows on
# the CPU); NUMTRACE_CHECK_SIMULATE_HANG=step (the step sleeps instead:
# tests the budget and the packing). Exit 0, 1 when a row failed, 143 when
# terminated, 2 on bad usage.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# --- the step limits: one table, read by every step and by --budget ----------
# PARTS STEP LIMIT_S  what it runs (realistic cost). PARTS "1c": only after a
# timeout (not in the sum).
limits_table() {
  cat <<'EOF'
1234 nvidia-smi       5 nvidia-smi query (<1 s), every part
1  torch-import      25 import torch, CUDA init (5-15 s)
1  shim_cupti_test   10 CUPTI layer gtests over fakes (1-2 s)
1  gpu_reduce_kernels_test 20 reduction kernels vs host bits, 1 GiB throughput (3-10 s)
1  callback-probe    15 every launch path, cuBLASLt, NCCL, handle queries (2-5 s)
1  pointer-probe     10 ctypes over libcuda, no torch (<2 s)
1  step-plain        25 bf16 train step, no numtrace (torch 5-15 s + 5 s)
1  step-shim         45 the same under numtrace and the hooks, tensor map (20-30 s)
1c step-noact        45 rerun of step-shim with NUMTRACE_ACTIVITY=0 after a timeout
1  nccl              30 init_process_group(nccl), all_reduce x3 (10-20 s)
1  nosync            35 20 eager steps, no host sync, every step captured (15-25 s)
1  mlp-inject        10 mlp_train under CUDA_INJECTION64_PATH (2-4 s)
1  holder-plain       5 cupti_holder alone (<1 s)
1  holder-shim        5 cupti_holder under numtrace (<2 s)
1  shim_gpu_test     30 8 mlp_train runs under the shim, diffs (10-20 s)
2  device_bench      12 reduction GB/s vs D2D copy (3-5 s)
2  empty-plain        5 100000 empty launches (<1 s)
2  empty-shim         8 the same under numtrace, capture off (1-2 s)
2  mlp-capture       10 mlp_train 6 steps, step 2 captured (2-4 s)
2  torch-eager       35 transformer 4 eager steps, hooks, step 2 captured (15-25 s)
2  torch-compile     90 the same torch.compile'd, cold Inductor/Triton (30-90 s)
2  torch-diff         8 numtrace-diff eager vs compile (<2 s)
2  torch-dump        35 the eager run with GEMM dumps (15-25 s)
2  dump-self          5 numtrace-diff --tensors on a dump (<1 s)
2  dump-vs-plain      5 numtrace-diff dump run vs eager run (<1 s)
2  watch-full        45 numtrace run --watch=full --steps 2, 30 steps (20-30 s)
2  watch-diff        10 numtrace-diff of the watch trace with itself (<3 s)
3  ops-cuda         20 numtrace run --ops --watch --steps 1, small MLP 3 steps (torch 5-15 s)
3  step-plain-async  25 bf16 train step, cudaMallocAsync, no numtrace
3  step-async        40 the same under numtrace
3  ro-async          60 compile reduce-overhead under cudaMallocAsync
3  ro-caching        60 compile reduce-overhead, caching allocator, hooks
3  tmap-plain        20 tensor_map_check.py plain
3  tmap-eager        25 tensor map bridge with the fake libnumtrace
3  tmap-expandable   25 the same with expandable segments
4  watch-plain       25 30 eager steps without numtrace
4  watch-sampled     35 numtrace run --watch (sampled), 30 steps
4  watch-hunt        15 numtrace twice --watch mlp_train --nondeterministic
4  pause-trim        90 max-autotune compile + empty_cache under cudaMallocAsync, under numtrace
4  profiler          35 torch.profiler over 20 captured steps under numtrace (15-25 s)
4  doctor            20 numtrace doctor
4  ranks-run         40 numtrace run torchrun 2 ranks
4  ranks-diff        10 numtrace-diff --across-ranks
EOF
}
# Seconds kept back from the steps for the final packing.
reserve=10
parts="1 2 3 4"

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; }
part="" results="" budget_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --part) part="${2:-}"; shift 2 || shift ;;
    --part=*) part="${1#--part=}"; shift ;;
    --budget) budget_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "gpu-check: unknown option $1" >&2; usage; exit 2 ;;
    *) results="$1"; shift ;;
  esac
done
budget=${NUMTRACE_CHECK_BUDGET_S:-290}
case "$budget" in ''|*[!0-9]*) echo "gpu-check: NUMTRACE_CHECK_BUDGET_S must be seconds, not '$budget'" >&2; exit 2 ;; esac

# The table with NUMTRACE_CHECK_LIMITS's values in place of its own.
limits() { limits_table | awk -v o="${NUMTRACE_CHECK_LIMITS:-}" '
  BEGIN { n = split(o, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); v[p[1]] = p[2] } }
  ($2 in v) { $3 = v[$2] } { print }'; }
# limit_of STEP: STEP's limit in seconds (nothing for a step not in the table).
limit_of() { limits | awk -v s="$1" '$2 == s { print $3; exit }'; }
for kv in ${NUMTRACE_CHECK_LIMITS:-}; do
  case "$kv" in
    [a-z]*=[0-9]*) case "${kv#*=}" in *[!0-9]*) ;; *) continue ;; esac ;;
  esac
  echo "gpu-check: NUMTRACE_CHECK_LIMITS wants STEP=SECONDS words, not '$kv'" >&2; exit 2
done
if [ $budget_only -eq 1 ]; then
  for p in ${part:-$parts}; do
    limits | awk -v p="$p" -v b="$budget" -v r="$reserve" '
      index($1, p) && $1 !~ /c$/ {
        s += $3; what = $4; for (i = 5; i <= NF; i++) what = what " " $i
        printf "part %s  %-24s %4d s  %s\n", p, $2, $3, what }
      index($1, p) && $1 ~ /c$/ { printf "part %s  %-24s %4d s  (after a timeout only)\n", p, $2, $3 }
      END { printf "part %s  sum of limits %d s, budget %d s less %d s packing: %s\n", p, s, b, r,
                   (s <= b - r) ? "fits" : "over (the last rows read out of time)" }'
  done
  exit 0
fi
case " $parts " in *" $part "*) ;; *) echo "gpu-check: --part 1, 2, 3 or 4 is required" >&2; usage; exit 2 ;; esac

# The bundle root holds lib/ and COMMIT; this script sits there and in
# scripts/. In the source tree (a dry run) the test scripts are in test/gpu.
if [ -e "$here/lib/libnumtrace.so" ] || [ -e "$here/COMMIT" ]; then bundle="$here"; else bundle="$(cd "$here/.." && pwd)"; fi
tdir="$bundle/test"; [ -d "$bundle/test/gpu" ] && tdir="$bundle/test/gpu"
bin="$bundle/bin"
lib="$bundle/lib/libnumtrace.so"
nt="$bin/numtrace"
ct="$tdir/check_trace.py"
hooks="$bundle/scripts/hooks"
export NUMTRACE_GPU_BUNDLE="$bundle"

results="${results:-${OUT:-$PWD/gpu-check-out}}"
mkdir -p "$results" || exit 2
results="$(cd "$results" && pwd)"
table="$results/gpu-check-part$part.txt"
archive="$results/gpu-check-part$part.tar.gz"
# Our own work folder goes at exit (it is packed); one named by the caller stays.
own_work=0
if [ -n "${NUMTRACE_CHECK_WORK:-}" ]; then work="$NUMTRACE_CHECK_WORK"
else work="$(mktemp -d /tmp/numtrace-gpu-check.XXXXXX)" || exit 2; own_work=1; fi
case "$work/" in "$results"/*) echo "gpu-check: the work folder must be outside $results" >&2; exit 2 ;; esac
logs="$work/logs" traces="$work/traces" reports="$work/reports"
mkdir -p "$logs" "$traces" "$reports" || exit 2
: >"$table"
start=$(date +%s)

# --- rows, time, steps ----------------------------------------------------
# row CHECK STATUS REASON: on stdout and appended to the table, one line.
failed=0
row() {
  local why="${3//$'\n'/ }"
  [ "$2" = fail ] && failed=1
  printf '%-44s %-5s %s\n' "$1" "$2" "${why//$'\r'/}" | tee -a "$table"
}
elapsed() { echo $(($(date +%s) - start)); }
# Seconds left for steps (the packing reserve kept back).
left() { echo $((budget - reserve - $(elapsed))); }
oot() { row "$1" "skip" "out of time ($(limit_of "$2") s needed for $2, $(left) s left)"; }

cur_pid=""
NOT_RUN=199
# step NAME CMD...: CMD under NAME's limit, stdout and stderr to
# logs/NAME.log (with STEP_ERR=FILE, stderr there). Status: CMD's; 124 timed
# out; $NOT_RUN (199) not started, its limit no longer fits in the time left
# (not 125: timeout itself fails with that). Runs in
# the background and waits, so TERM is handled at once.
step() {
  local name=$1; shift
  local limit; limit=$(limit_of "$name")
  local log="$logs/$name.log" err="${STEP_ERR:-}"
  [ -n "$limit" ] || { row "$name" "fail" "no limit in the table (gpu-check.sh bug)"; return 126; }
  if [ "$(left)" -lt "$limit" ]; then echo "out of time: $limit s needed, $(left) s left" >"$log"; return $NOT_RUN; fi
  [ "${NUMTRACE_CHECK_SIMULATE_HANG:-}" = "$name" ] && set -- sleep 100000
  if [ -n "$err" ]; then timeout -k 5 "$limit" "$@" >"$log" 2>"$err" &
  else timeout -k 5 "$limit" "$@" >"$log" 2>&1 &
  fi
  cur_pid=$!
  wait "$cur_pid"
  local rc=$?
  cur_pid=""
  return $rc
}
# descendants PID: PID's children, grandchildren, ... (breadth first).
descendants() {
  local q=("$1") p c
  while [ ${#q[@]} -gt 0 ]; do
    p=${q[0]}; q=("${q[@]:1}")
    for c in $(pgrep -P "$p" 2>/dev/null); do echo "$c"; q+=("$c"); done
  done
}
# stepbt NAME CMD...: as step, but on a timeout first writes a backtrace of
# every thread of the command's processes to logs/NAME.log.bt (cuda-gdb,
# else gdb), at most 20 s each and only while 25 s are left: a hang names
# where it hangs and the budget still holds.
stepbt() {
  local name=$1; shift
  local limit; limit=$(limit_of "$name")
  local log="$logs/$name.log"
  [ -n "$limit" ] || { row "$name" "fail" "no limit in the table (gpu-check.sh bug)"; return 126; }
  if [ "$(left)" -lt "$limit" ]; then echo "out of time: $limit s needed, $(left) s left" >"$log"; return $NOT_RUN; fi
  [ "${NUMTRACE_CHECK_SIMULATE_HANG:-}" = "$name" ] && set -- sleep 100000
  # The outer limit leaves room for the backtraces; the loop below ends the
  # command at LIMIT.
  timeout -k 5 "$((limit + 60))" "$@" >"$log" 2>&1 &
  cur_pid=$!
  local deadline=$(($(date +%s) + limit))
  while kill -0 "$cur_pid" 2>/dev/null && [ "$(date +%s)" -lt $deadline ]; do sleep 0.2; done
  if ! kill -0 "$cur_pid" 2>/dev/null; then
    wait "$cur_pid"; local rc=$?; cur_pid=""; return $rc
  fi
  local dbg p pids; dbg=$(command -v cuda-gdb || command -v gdb)
  pids=$(descendants "$cur_pid")
  [ -n "$pids" ] || echo "no process under the step's timeout (pgrep missing?)" >>"$log.bt"
  for p in $pids; do
    if [ -z "$dbg" ]; then echo "no cuda-gdb or gdb: no backtrace" >>"$log.bt"; break; fi
    if [ "$(left)" -lt 25 ]; then echo "no backtrace of pid $p and later: $(left) s left" >>"$log.bt"; break; fi
    echo "=== pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-200)" >>"$log.bt"
    timeout -k 2 20 "$dbg" -batch -p "$p" -ex "thread apply all bt" >>"$log.bt" 2>&1 </dev/null
  done
  kill -TERM "$cur_pid" 2>/dev/null
  wait "$cur_pid" 2>/dev/null
  cur_pid=""
  return 124
}
# last LOG: its last line, cut to 100 characters.
last() { tail -1 "$1" 2>/dev/null | cut -c1-100; }
# why RC LOG: why a step failed, for its row.
why() {
  case "$1" in
    124) echo "timed out" ;;
    137) echo "killed (the limit's KILL, or out of memory): $(last "$2")" ;;
    *) echo "exit $1: $(last "$2")" ;;
  esac
}
# The largest *.ntrace.jsonl under DIR: a job's helper processes (compile
# workers) may leave small traces of their own beside the main one.
main_trace() { find "$1" -name '*.ntrace.jsonl' -printf '%s %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-; }
# summarize KEY TRACE: check_trace.py's summary of TRACE (JSON parsed), read
# back with val KEY FIELD ('?' when absent).
summarize() {
  : >"$work/sum-$1"
  [ -n "$2" ] && python3 "$ct" summary "$2" >"$work/sum-$1" 2>>"$logs/check_trace.log"
}
val() { local v; v=$(grep -m1 "^$2=" "$work/sum-$1" 2>/dev/null | cut -d= -f2-); echo "${v:-?}"; }
# footer LABEL KEY: one row with the footer of summary KEY's trace - kernels
# unmeasured and every non-zero capture counter (docs/format.md, "Footer
# counters"); fail without a footer or when a context could not be prepared.
footer() {
  local f; f=$(val "$2" footer_row)
  if [ "$f" = "?" ]; then row "footer $1" "fail" "no trace"; return; fi
  row "footer $1" "${f%% *}" "${f#* }"
}
# jfind JSON KEY: the first value of KEY in a JSON report, JSON-encoded.
jfind() { python3 "$ct" find "$1" "$2" 2>/dev/null; }
# traced NAME CMD...: a capture. CMD (which writes its traces under
# traces/NAME: NUMTRACE_OUTPUT_DIR or -o) runs as stepbt NAME in an emptied
# traces/NAME; the largest trace there is then summarized as key NAME
# (val NAME FIELD), whatever CMD's status. Status: CMD's, as stepbt's.
traced() {
  local name=$1; shift
  rm -rf "${traces:?}/$name"
  stepbt "$name" "$@"
  local rc=$?
  [ $rc -ne $NOT_RUN ] && summarize "$name" "$(main_trace "$traces/$name")"
  return $rc
}
# ran CHECK NAME RC: true when step NAME (status RC) ran and exited 0; else
# false after CHECK's row: skip "out of time" when it was not started, fail
# with why otherwise.
ran() {
  case $3 in
    0) return 0 ;;
    "$NOT_RUN") oot "$1" "$2" ;;
    *) row "$1" "fail" "$(why "$3" "$logs/$2.log")" ;;
  esac
  return 1
}
# verdict CHECK PASS FAIL TEST...: CHECK's row, pass with reason PASS when
# the command TEST... succeeds, else fail with reason FAIL.
verdict() {
  local check=$1 pass=$2 fail=$3; shift 3
  if "$@"; then row "$check" "pass" "$pass"; else row "$check" "fail" "$fail"; fi
}
# positive V...: every V is a whole number above 0 (not "?", not empty).
positive() {
  local v
  for v; do [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || return 1; done
}
# same_bytes A B: file A is not empty and B holds the same bytes.
same_bytes() { [ -s "$1" ] && cmp -s "$1" "$2"; }
# clean KEY: summary KEY's trace has kernel records, none dropped and every
# buffer range confirmed by the driver.
clean() {
  positive "$(val "$1" kernel_records)" && [ "$(val "$1" dropped)" = 0 ] && [ "$(val "$1" counter.ranges_unconfirmed)" = 0 ]
}
# rss_growth LOG: "first last growth" of the job's "rss step N KB" lines, from
# step 5 on (after the warm-up), in KB.
rss_growth() {
  awk '$1 == "rss" && $2 == "step" && $3 >= 5 { if (f == "") f = $4; l = $4 }
       END { if (f == "") print "? ? ?"; else print f, l, l - f }' "$1" 2>/dev/null
}
# step_ms LOG: the median of the job's "time step N MS" lines from step 3 on.
step_ms() {
  awk '$1 == "time" && $2 == "step" && $3 >= 3 { print $4 }' "$1" 2>/dev/null | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", v[int((NR + 1) / 2)]; else print "?" }'
}
# The hooks on PYTHONPATH, as `numtrace run` sets them; they mark a step
# after optimizer.step(), so the check scripts must not mark one too.
hooks_env=(PYTHONPATH="$hooks${PYTHONPATH:+:$PYTHONPATH}" NUMTRACE_LIB_PATH="$lib" NUMTRACE_CHECK_NO_MARK=1)

# --- packing: after each section and on exit --------------------------------
# pack [final]: the table, logs and reports into the archive (a temporary
# file in the work folder, then moved: a kill never leaves half an archive);
# final also packs the traces when time is left and the archive stays under
# 15 MiB.
pack() {
  local tmp="$work/pack.tar.gz" what=(logs reports) limit=5
  cp "$table" "$work/" 2>/dev/null
  if [ "${1:-}" = final ]; then
    limit=$((budget - $(elapsed) - 2)); [ $limit -gt $reserve ] && limit=$reserve
    [ $limit -lt 2 ] && limit=2
    [ $limit -ge 6 ] && what+=(traces)
  fi
  local t0; t0=$(date +%s)
  # Tensor dumps (.npy, up to 256 MiB) stay out: the rows checked them there.
  (cd "$work" && timeout -k 1 "$limit" tar czf "$tmp" --exclude='*.npy' "$(basename "$table")" "${what[@]}" 2>/dev/null)
  local rc=$?
  if [ $rc -ne 0 ] || [ "$(stat -c %s "$tmp" 2>/dev/null || echo 0)" -gt $((15 * 1024 * 1024)) ]; then
    limit=$((limit - ($(date +%s) - t0))); [ $limit -lt 2 ] && limit=2
    (cd "$work" && timeout -k 1 "$limit" tar czf "$tmp" "$(basename "$table")" logs reports 2>/dev/null)
  fi
  [ -s "$tmp" ] && mv -f "$tmp" "$archive"
}
terminated=0
finish() {
  trap - EXIT TERM INT HUP
  if [ -n "$cur_pid" ]; then kill -TERM "$cur_pid" 2>/dev/null; wait "$cur_pid" 2>/dev/null; fi
  [ $terminated -eq 1 ] && row "gpu-check part $part" "fail" "terminated after $(elapsed) s: the rows after this one did not run"
  echo "numtrace gpu-check part $part ($(cut -c1-12 "$bundle/COMMIT" 2>/dev/null || echo source tree)), $(elapsed) s of $budget s; table $table; logs and traces packed into $archive"
  pack final
  [ $own_work -eq 1 ] && rm -rf "$work"
  [ $terminated -eq 1 ] && exit 143
  exit $failed
}
trap finish EXIT
trap 'terminated=1; exit 143' TERM INT HUP
section_end() { pack; }

# --- environment (every part) ---------------------------------------------
gpu=0
step nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
case $? in
  0) gpu=1; row "gpu" "info" "$(head -1 "$logs/nvidia-smi.log")" ;;
  124) row "gpu" "fail" "nvidia-smi timed out" ;;
esac
if [ $gpu -eq 0 ]; then
  if [ -e /dev/nvidia0 ] || [ "${NUMTRACE_CHECK_FORCE_GPU:-0}" = 1 ]; then
    gpu=1; row "gpu" "info" "nvidia-smi failed; trying the GPU checks anyway"
  else
    row "gpu" "skip" "no GPU/driver (nvidia-smi failed): every GPU check below skips"
  fi
fi
have=$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9.]*$')
need=$(sort -V "$bundle/GLIBC_REQUIRED" 2>/dev/null | tail -1 | cut -d' ' -f1)
if [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
  row "glibc" "fail" "machine has $have, bundle needs $need ($(sort -V "$bundle/GLIBC_REQUIRED" | tail -1))"
elif [ -n "$need" ]; then
  row "glibc" "pass" "machine $have, bundle needs $need"
else
  row "glibc" "info" "machine ${have:-?}; no GLIBC_REQUIRED (not a bundle)"
fi
if [ $gpu -eq 1 ] && [ ! -e "$lib" ]; then row "libnumtrace.so" "fail" "not in the bundle ($lib)"; fi
have_python=0; command -v python3 >/dev/null 2>&1 && have_python=1
[ $have_python -eq 1 ] || row "python3" "fail" "not on PATH: every torch row and every trace reading fails"
# torch: part 1 imports it (version, CUDA, device) once; the other parts ask
# only whether it is installed (each torch row says the rest).
python_torch=0
if [ $gpu -eq 1 ] && [ $have_python -eq 1 ]; then
  if [ "$part" = 1 ]; then
    step torch-import python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
    rc=$?
    if [ $rc -eq 0 ]; then python_torch=1; row "torch" "info" "$(last "$logs/torch-import.log")"
    elif [ $rc -eq $NOT_RUN ]; then oot "torch" torch-import
    elif [ $rc -eq 124 ]; then row "torch" "fail" "import torch timed out ($(limit_of torch-import) s): every torch row skips"
    else row "torch" "skip" "python3 cannot use torch with CUDA (exit $rc): $(last "$logs/torch-import.log")"; fi
  elif python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' 2>/dev/null; then
    python_torch=1
  else
    row "torch" "skip" "python3 has no torch"
  fi
fi
[ "${NUMTRACE_CHECK_FORCE_GPU:-0}" = 1 ] && [ $have_python -eq 1 ] && python_torch=1
section_end

# gtest_rows NAME [each]: one row for the binary (default) or one per test.
gtest_rows() {
  local name=$1 mode=${2:-summary} log="$logs/$1.log"
  if [ ! -x "$bin/$name" ]; then
    if [ $gpu -eq 1 ]; then row "$name" "fail" "not in the bundle"; else row "$name" "skip" "not in the bundle (no GPU here)"; fi
    return
  fi
  step "$name" "$bin/$name" --gtest_color=no
  local rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "$name" "$name"; return; }
  [ $rc -eq 124 ] && [ "$mode" != summary ] && row "$name" "fail" "timed out"
  local lines; lines=$(grep -E '^\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z_]+\.[A-Za-z_0-9]+ \(' "$log")
  if [ "$mode" = summary ]; then
    local ok fail skip
    ok=$(grep -c '^\[       OK \]' <<<"$lines"); fail=$(grep -c 'FAILED' <<<"$lines"); skip=$(grep -c 'SKIPPED' <<<"$lines")
    if [ "$fail" -gt 0 ] || [ $rc -ne 0 ]; then
      row "$name" "fail" "$([ $rc -eq 124 ] && echo "timed out" || echo "exit $rc"), $ok passed, $fail failed: $(grep FAILED <<<"$lines" | sed -E 's/.*\] ([^ ]+) .*/\1/' | tr '\n' ' ' | cut -c1-90)"
    elif [ "$ok" -eq 0 ]; then
      # Nothing ran: a skip is not a pass (say why, from the first skip).
      row "$name" "skip" "$skip skipped: $(grep -m1 -A2 ': Skipped' "$log" | grep -vE '^\[' | sed -E 's#^[^ ]+:[0-9]+: Skipped ?##' | tr '\n' ' ' | cut -c1-90)"
    else
      row "$name" "pass" "$ok passed, $skip skipped"
    fi
    return
  fi
  local line test status why
  while read -r line; do
    [ -n "$line" ] || continue
    test=$(echo "$line" | sed -E 's/^\[ +[A-Z]+ +\] ([^ ]+) .*/\1/')
    case "$line" in
      *"[       OK ]"*) status=pass; why="" ;;
      *FAILED*) status=fail ;;
      *) status=skip ;;
    esac
    if [ "$status" != pass ]; then
      why=$(grep -A3 -E "^\[ RUN +\] $test\$" "$log" | grep -vE '^\[' | sed -E 's#^[^ ]+:[0-9]+: (Skipped|Failure) ?##' | head -2 | tr '\n' ' ' | cut -c1-110)
    fi
    row "$test" "$status" "$why"
  done <<<"$lines"
  # A crash ends the binary without a FAILED line for the test it was in.
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -q FAILED <<<"$lines"; then
    row "$name" "fail" "exit $rc without a failed test (crash?): $(last "$log")"
  fi
}

# ============================================================================
# PART 1: the hardware questions
# ============================================================================

# Reduction bit-equality (and the CUPTI layer's own tests, which need no GPU).
part1_gtests() {
  gtest_rows shim_cupti_test
  if [ $gpu -eq 1 ]; then gtest_rows gpu_reduce_kernels_test
  else row "gpu_reduce_kernels_test" "skip" "no GPU"; fi
}

# Which callbacks fire per launch path, what the handle queries answer for
# each path's handle (docs/gpu.md, "Probe answers").
part1_probe() {
  if [ $gpu -eq 0 ] || [ ! -x "$bin/callback_probe" ]; then
    row "callback probe" "skip" "needs a GPU and bin/callback_probe"; return
  fi
  # cuBLASLt and NCCL from the PyTorch wheel's nvidia/ packages when the
  # loader path has none.
  local nv="" probe_env=() log="$logs/callback-probe.log"
  [ $python_torch -eq 1 ] && nv=$(timeout -k 1 5 python3 -c 'import os, nvidia; print(os.path.dirname(list(nvidia.__path__)[0]))' 2>/dev/null)
  if [ -n "$nv" ]; then
    local blas nccl
    blas=$(find "$nv" -name 'libcublasLt.so.1[0-9]*' 2>/dev/null | head -1)
    nccl=$(find "$nv" -name 'libnccl.so.2*' 2>/dev/null | head -1)
    [ -n "$blas" ] && probe_env+=(NUMTRACE_PROBE_CUBLASLT="$blas")
    [ -n "$nccl" ] && probe_env+=(NUMTRACE_PROBE_NCCL="$nccl")
  fi
  step callback-probe env ${probe_env[@]+"${probe_env[@]}"} "$bin/callback_probe"
  local rc=$? line
  [ $rc -eq $NOT_RUN ] && { oot "callback probe" callback-probe; return; }
  while read -r line; do
    case "$line" in
      "probe verdict:"*|"probe handles:"*) ;;
      "probe handle "*) line=${line#probe handle }; row "handle ${line%%: *}" "info" "${line#*: }" ;;
      *) line=${line#probe }; row "callbacks ${line%%: *}" "info" "${line#*: }" ;;
    esac
  done < <(grep '^probe ' "$log")
  if grep -q '^probe verdict: driver callbacks cover' "$log"; then
    row "launch paths reach driver callbacks" "pass" "every probed path raised a driver launch callback"
  elif grep -q '^probe verdict' "$log"; then
    # numtrace then decodes those launches from the runtime callback
    # (footer runtime_without_driver > 0); layouts only for __cudaLaunchKernel.
    row "launch paths reach driver callbacks" "info" "$(grep '^probe verdict' "$log" | sed 's/^probe verdict: //') - runtime fallback in use"
  fi
  grep -q '^probe activity: refused' "$log" &&
    row "kernel activity records" "fail" "$(grep '^probe activity' "$log" | sed 's/^probe //') - footer activity_unavailable=1, unmeasured unknown"
  # The handle queries run last; a crash in one leaves its line unfinished.
  if grep -q '^probe handles: done' "$log"; then
    row "handle queries on every path's handle" "pass" "no crash; answers in the handle rows (0 = success)"
  elif [ $rc -eq 0 ] || grep '^probe handle ' "$log" >/dev/null; then
    row "handle queries on every path's handle" "fail" "exit $rc before the end: died in '$(grep '^probe handle ' "$log" | tail -1 | cut -c14-110)'"
  else
    row "callback probe" "fail" "exit $rc: $(last "$log")"
  fi
}

part1_pointer_probe() {
  if [ $gpu -eq 0 ] || [ $have_python -eq 0 ] || [ ! -e "$tdir/pointer_probe.py" ]; then
    row "pointer attribute probe" "skip" "needs a GPU and python3"; return
  fi
  step pointer-probe python3 "$tdir/pointer_probe.py"
  local rc=$? line
  [ $rc -eq $NOT_RUN ] && { oot "pointer attribute probe" pointer-probe; return; }
  if [ $rc -eq 0 ]; then
    while read -r line; do line=${line#probe }; row "pointer ${line%%: *}" "info" "${line#*: }"; done \
      < <(grep '^probe ' "$logs/pointer-probe.log")
  else
    row "pointer attribute probe" "fail" "$(why $rc "$logs/pointer-probe.log")"
  fi
}

# A bf16 training step without and with numtrace as `numtrace run` runs it
# (hooks on PYTHONPATH, PyTorch's caching allocator, the tensor map): params
# bitwise equal, the captured step without drops or unconfirmed ranges, the
# map attached and a 2048x2048 bf16 weight a buffer of its own (8388608
# bytes: a tensor, not a segment). The check script's own step marks are off
# (NUMTRACE_CHECK_NO_MARK=1): with the hooks' mark too, every iteration
# would be two steps and step 1 would hold no kernel.
part1_train_step() {
  local tc="$tdir/torch_checks.py" rc key=step-shim
  step step-plain python3 "$tc" train-step "$work/step-plain.sha"
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "torch train step" step-plain; return; }
  [ $rc -eq 0 ] || row "torch train step (no numtrace)" "fail" "$(why $rc "$logs/step-plain.log")"
  traced step-shim env LD_PRELOAD="$lib" NUMTRACE_STEPS=1 NUMTRACE_OUTPUT_DIR="$traces/step-shim" "${hooks_env[@]}" \
    python3 "$tc" train-step "$work/step-shim.sha"
  rc=$?
  if [ $rc -eq 124 ]; then
    row "torch train step under numtrace" "fail" "timed out: backtraces in logs/step-shim.log.bt"
    key=step-noact
    traced step-noact env LD_PRELOAD="$lib" NUMTRACE_STEPS=1 NUMTRACE_ACTIVITY=0 NUMTRACE_OUTPUT_DIR="$traces/step-noact" \
      "${hooks_env[@]}" python3 "$tc" train-step "$work/step-shim.sha"
    rc=$?
    case $rc in
      0) row "torch train step, NUMTRACE_ACTIVITY=0" "fail" "runs without activity records: they were the hang" ;;
      "$NOT_RUN") oot "torch train step, NUMTRACE_ACTIVITY=0" step-noact; return ;;
      *) row "torch train step, NUMTRACE_ACTIVITY=0" "fail" "exit $rc: the hang is elsewhere (see the .bt logs)"; return ;;
    esac
  fi
  ran "torch train step under numtrace" step-shim $rc || return
  verdict "torch train step: params bitwise equal" "hidden 2048 bf16, caching allocator, with and without numtrace + hooks" \
    "parameters differ after the step with numtrace (or the plain run failed)" \
    same_bytes "$work/step-plain.sha" "$work/step-shim.sha"
  local k; k=$(val $key kernel_records)
  verdict "torch train step: no drops, ranges confirmed" "$k kernels, ring_bytes $(val $key counter.ring_bytes)" \
    "kernels $k, dropped $(val $key dropped), ranges_unconfirmed $(val $key counter.ranges_unconfirmed), ring_full $(val $key counter.ring_full)" \
    clean $key
  local note te; note=$(val $key note_tensor_map); te=$(val $key counter.tensor_events)
  if [[ "$note" == *attached* ]] && [[ "$note" != *"NOT attached"* ]] && positive "$te"; then
    row "tensor map: attached (caching allocator)" "pass" "tensor_events $te, pointers_outside_tensors $(val $key counter.pointers_outside_tensors)"
  else
    row "tensor map: attached (caching allocator)" "fail" "${note:-no tensor map note}; tensor_events $te (a bridge build error is in logs/step-shim.log)"
  fi
  local w; w=$(val $key w8388608)
  verdict "tensor map: buffers are tensors" "$w kernel records with a 2048x2048 bf16 weight buffer" \
    "no buffer of 8388608 bytes in $k kernel records: buffers are segments (see the footer row)" positive "$w"
  footer "torch train step" $key
}

# NCCL inside torch: world size 1, all_reduce; its kernel must carry buffers
# (NCCL passes one 4 KiB argument block).
part1_nccl() {
  traced nccl env LD_PRELOAD="$lib" NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR="$traces/nccl" \
    python3 "$tdir/torch_checks.py" nccl
  local rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "NCCL all_reduce captured with buffers" nccl; return; }
  local n nb; n=$(val nccl nccl); nb=$(val nccl nccl_buffers)
  if [ $rc -eq 0 ] && [ "$n" = 0 ] && [ "$(val nccl counter.kernels_unmeasured)" = 0 ]; then
    row "NCCL all_reduce captured with buffers" "info" "no NCCL kernel ran on one rank (NCCL's single-rank shortcut?)"
  elif [ $rc -eq 0 ] && positive "$nb"; then
    row "NCCL all_reduce captured with buffers" "pass" "$n NCCL kernel records, $nb with buffers; params_extra_short $(val nccl counter.params_extra_short)"
  else
    row "NCCL all_reduce captured with buffers" "fail" "exit $rc, $n NCCL kernel records, $nb with buffers, params_extra_short $(val nccl counter.params_extra_short), unmeasured $(val nccl counter.kernels_unmeasured)"
  fi
}

# 20 eager steps without a host synchronisation inside the loop, every step
# captured, hooks on: the host runs ahead of the GPU as in a real job. Does
# the ring stay small (ring_bytes), do late activity records read as
# unmeasured kernels (kernels_unmeasured), does host memory grow?
part1_nosync() {
  traced nosync env LD_PRELOAD="$lib" NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR="$traces/nosync" "${hooks_env[@]}" \
    python3 "$tdir/torch_transformer.py" --mode eager --steps 20 --no-sync
  local rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "no-sync 20 steps, all captured" nosync; return; }
  [ $rc -eq 124 ] && { row "no-sync 20 steps, all captured" "fail" "timed out: backtraces in logs/nosync.log.bt"; return; }
  local u d s r0 r1 rg; u=$(val nosync counter.kernels_unmeasured); d=$(val nosync dropped); s=$(val nosync steps)
  read -r r0 r1 rg < <(rss_growth "$logs/nosync.log")
  local fig; fig="steps $s, kernels $(val nosync kernel_records), ring_bytes $(val nosync counter.ring_bytes), ring_full $(val nosync counter.ring_full), kernels_unmeasured $u, kernels_late $(val nosync counter.kernels_late), dropped $d, host RSS ${r1:-?} KB (+${rg:-?} KB from step 5)"
  if [ $rc -eq 0 ] && [ "$u" = 0 ] && [ "$d" = 0 ] && [ "$(val nosync footer)" = yes ]; then
    row "no-sync 20 steps, all captured" "pass" "$fig"
  else
    row "no-sync 20 steps, all captured" "fail" "exit $rc, footer $(val nosync footer): $fig"
  fi
  footer "no-sync 20 steps" nosync
}

# How the shim wakes up: CUDA_INJECTION64_PATH alone; CUPTI held by another subscriber.
part1_inject_holder() {
  if [ $gpu -eq 1 ] && [ -x "$bin/mlp_train" ]; then
    # NUMTRACE_STEPS=all: mlp_train looks numtrace_mark_step up before its
    # first CUDA call, when the driver has not loaded the library yet.
    traced mlp-inject env CUDA_INJECTION64_PATH="$lib" NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR="$traces/mlp-inject" \
      "$bin/mlp_train" --steps 4
    if ran "CUDA_INJECTION64_PATH capture" mlp-inject $?; then
      local k; k=$(val mlp-inject kernel_records)
      verdict "CUDA_INJECTION64_PATH capture" "$k kernel records" "no kernel records" positive "$k"
      footer "mlp inject" mlp-inject
    fi
  else
    row "CUDA_INJECTION64_PATH capture" "skip" "needs a GPU and bin/mlp_train"
  fi
  if [ $gpu -eq 0 ] || [ ! -x "$bin/cupti_holder" ]; then
    row "CUPTI held by another subscriber" "skip" "needs a GPU and bin/cupti_holder"; return
  fi
  step holder-plain "$bin/cupti_holder"
  local rc0=$?
  [ $rc0 -eq $NOT_RUN ] && { oot "CUPTI held by another subscriber" holder-plain; return; }
  if [ $rc0 -ne 0 ]; then
    row "CUPTI held by another subscriber" "skip" "cupti_holder alone exits $rc0: $(grep cupti_holder "$logs/holder-plain.log" | tail -1)"; return
  fi
  STEP_ERR="$logs/holder-shim.err" step holder-shim env LD_PRELOAD="$lib" NUMTRACE_OUTPUT_DIR="$traces/holder" "$bin/cupti_holder"
  local rc1=$?
  [ $rc1 -eq $NOT_RUN ] && { oot "CUPTI held by another subscriber" holder-shim; return; }
  local n same=no; n=$(grep -c '^numtrace:' "$logs/holder-shim.err")
  grep -v '^cupti_holder:' "$logs/holder-plain.log" | cmp -s - "$logs/holder-shim.log" && same=yes
  if [ $rc1 -eq 0 ] && [ "$n" -eq 1 ] && [ $same = yes ] && grep -q '^numtrace:.*cupti_holder' "$logs/holder-shim.err"; then
    row "CUPTI held by another subscriber" "pass" "one line naming cupti_holder, output unchanged"
  else
    row "CUPTI held by another subscriber" "fail" "exit $rc1, $n numtrace lines, same output: $same: $(grep '^numtrace:' "$logs/holder-shim.err" | head -1 | cut -c1-80)"
  fi
}

if [ "$part" = 1 ]; then
  part1_gtests; section_end
  part1_probe; part1_pointer_probe; section_end
  if [ $gpu -eq 1 ] && [ $python_torch -eq 1 ]; then
    part1_train_step; section_end
    part1_nccl; section_end
    part1_nosync; section_end
  else
    row "torch train step / tensor map / NCCL / no-sync" "skip" "needs a GPU and python3 with torch"
  fi
  part1_inject_holder
  if [ $gpu -eq 1 ]; then gtest_rows shim_gpu_test each; else row "shim_gpu_test" "skip" "no GPU"; fi
  section_end
fi

# ============================================================================
# PART 2: figures, torch eager/compile with provenance, dumps, watch mode
# ============================================================================

part2_figures() {
  step device_bench "$bin/device_bench" 1024
  local rc=$? k v
  if ran "bench device_bench" device_bench $rc; then
    while read -r k v; do row "bench $k" "info" "$v"; done <"$logs/device_bench.log"
  fi
  # Per-launch overhead, capture off (NUMTRACE_STEPS names a step never reached).
  step empty-plain "$bin/empty_kernels" 100000; rc=$?
  if [ $rc -eq 0 ]; then
    step empty-shim env LD_PRELOAD="$lib" NUMTRACE_STEPS=1000000 NUMTRACE_OUTPUT_DIR="$traces/empty" \
      "$bin/empty_kernels" 100000; rc=$?
  fi
  if [ $rc -eq $NOT_RUN ]; then oot "bench launch_us plain / shim (capture off)" empty-shim
  elif [ $rc -eq 0 ]; then
    local a b
    a=$(awk '/us_per_launch/ {print $2}' "$logs/empty-plain.log"); b=$(awk '/us_per_launch/ {print $2}' "$logs/empty-shim.log")
    row "bench launch_us plain / shim (capture off)" "info" "$a / $b (+$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b - a}') us)"
  else
    row "bench launch overhead" "fail" "exit $rc: see logs/empty-*.log"
  fi
  # Capture step vs normal steps (mlp_train prints step times on stderr).
  traced mlp-capture env LD_PRELOAD="$lib" NUMTRACE_STEPS=2 NUMTRACE_OUTPUT_DIR="$traces/mlp-capture" "$bin/mlp_train" --steps 6
  if ran "bench mlp step_ms capture / normal" mlp-capture $?; then
    local cap norm
    cap=$(awk '/step 2 time_ms/ {print $5}' "$logs/mlp-capture.log")
    norm=$(awk '/time_ms/ && $3 >= 3 {s += $5; n++} END {if (n) printf "%.3f", s / n}' "$logs/mlp-capture.log")
    row "bench mlp step_ms capture / normal" "info" "$cap / $norm"
    footer "mlp capture" mlp-capture
  fi
}

# The transformer eager and compiled under numtrace as `numtrace run` runs it
# (hooks, caching allocator, tensor map), step 2 captured: kernels, cuBLAS,
# ATen and Triton kernels, bf16 and typed buffers; the provenance the hooks
# add (phase, scope, op; NUMTRACE_HOOKS_LOG); the diff of the two.
part2_torch() {
  local mode t rc status k own kind what ok=1
  for mode in eager compile; do
    t="torch-$mode"
    traced "$t" env LD_PRELOAD="$lib" NUMTRACE_STEPS=2 NUMTRACE_OUTPUT_DIR="$traces/$t" NUMTRACE_LABEL="$mode" \
      NUMTRACE_HOOKS_LOG="$logs/hooks-$mode.log" "${hooks_env[@]}" \
      python3 "$tdir/torch_transformer.py" --mode "$mode" --steps 4
    rc=$?
    [ $rc -eq $NOT_RUN ] && { oot "torch $mode trace" "$t"; ok=0; continue; }
    if [ $rc -ne 0 ]; then
      row "torch $mode run" "fail" "$(why $rc "$logs/$t.log")$([ $rc -eq 124 ] && echo ': backtraces in the .bt log')"
      ok=0; continue
    fi
    if [ "$(val "$t" footer)" = "?" ]; then row "torch $mode trace" "fail" "no trace file"; ok=0; continue; fi
    # Both modes: cuBLAS GEMMs and bf16 records; eager ATen's own kernels,
    # compile Triton's, whose records must carry typed buffers (a buffer
    # whose dtype is not raw), as eager's GEMMs must.
    own=aten kind=cuBLAS what=gemm
    [ "$mode" = compile ] && own=triton kind=Triton what=triton
    k=$(val "$t" kernel_records)
    status=pass
    positive "$k" "$(val "$t" gemm)" "$(val "$t" bf16)" "$(val "$t" $own)" || status=fail
    row "torch $mode trace" "$status" "kernels $k, cuBLAS $(val "$t" gemm), ATen $(val "$t" aten), Triton $(val "$t" triton), bf16 records $(val "$t" bf16), step $(step_ms "$logs/$t.log") ms"
    verdict "$kind kernels have typed buffers" "$(val "$t" typed_$what) of $(val "$t" $what)" \
      "0 of $(val "$t" $what) $kind records carry a typed buffer" positive "$(val "$t" typed_$what)"
    footer "torch $mode" "$t"
    local prov; prov=$(val "$t" "provenance_$mode")
    row "provenance $mode trace" "${prov%% *}" "$(echo "${prov#* }" | cut -c1-200)"
    row "provenance $mode hooks log" "info" "$(wc -l <"$logs/hooks-$mode.log" 2>/dev/null || echo 0) events, steps $(grep -o '^step=[0-9]*' "$logs/hooks-$mode.log" 2>/dev/null | sort -u | tr '\n' ' ')"
  done
  [ $ok -eq 1 ] || return
  step torch-diff "$bin/numtrace-diff" "$(main_trace "$traces/torch-eager")" "$(main_trace "$traces/torch-compile")" \
    --json "$reports/torch-diff.json" -o "$reports/torch-report.html" --force
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "torch eager vs compile diff" torch-diff; return; }
  if [ $rc -le 1 ] && [ -s "$reports/torch-diff.json" ]; then
    row "torch eager vs compile diff" "pass" "exit $rc verdict $(jfind "$reports/torch-diff.json" verdict) first $(jfind "$reports/torch-diff.json" a_name | cut -c1-70)"
  else
    row "torch eager vs compile diff" "fail" "$(why $rc "$logs/torch-diff.log")"
  fi
}

# Tensor dumps: a cuBLAS GEMM's buffers copied on the GPU. Each dump's bytes
# must hash as traced (the shim checks: a mismatch is a note; numtrace-diff
# --tensors checks again), and dumping must change nothing: the trace equals
# the plain eager run's bit for bit, and so do the losses.
part2_dump() {
  local plain; plain=$(main_trace "$traces/torch-eager")
  if [ -z "$plain" ]; then row "tensor dumps (cuBLAS GEMM)" "skip" "needs the torch eager trace"; return; fi
  traced torch-dump env LD_PRELOAD="$lib" NUMTRACE_STEPS=2 NUMTRACE_OUTPUT_DIR="$traces/torch-dump" NUMTRACE_LABEL=eager \
    NUMTRACE_DUMP='regex:gemm|cutlass|nvjet|sm90_xmma' NUMTRACE_DUMP_MAX_BYTES=256M "${hooks_env[@]}" \
    python3 "$tdir/torch_transformer.py" --mode eager --steps 4
  ran "dump of cuBLAS GEMM equals trace hash" torch-dump $? || return
  local rc tr n side; tr=$(main_trace "$traces/torch-dump")
  n=$(find "$traces/torch-dump" -name 'dump_*.json' | wc -l)
  side=$(find "$traces/torch-dump" -name 'dump_*.json' | sort | head -1)
  if [ "$n" -gt 0 ] && [ "$(val torch-dump dump_notes)" = 0 ]; then
    step dump-self "$bin/numtrace-diff" --tensors "$side" "$side" --json "$reports/dump-self.json" --force
    rc=$?
    if [ $rc -eq $NOT_RUN ]; then oot "dump of cuBLAS GEMM equals trace hash" dump-self
    elif [ $rc -eq 0 ] && [ "$(jfind "$reports/dump-self.json" warnings)" = "[]" ]; then
      row "dump of cuBLAS GEMM equals trace hash" "pass" "$n GEMM launches dumped, every buffer's bytes hash as traced"
    else
      row "dump of cuBLAS GEMM equals trace hash" "fail" "numtrace-diff --tensors exit $rc, warnings $(jfind "$reports/dump-self.json" warnings | cut -c1-80)"
    fi
  else
    row "dump of cuBLAS GEMM equals trace hash" "fail" "$n dumps, $(val torch-dump dump_notes) dump notes: $(val torch-dump note_dump | cut -c1-80)"
  fi
  step dump-vs-plain "$bin/numtrace-diff" "$plain" "$tr" --json "$reports/dump-vs-plain.json" --force
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "results unchanged with dumping on" dump-vs-plain; return; }
  local v same=no; v=$(jfind "$reports/dump-vs-plain.json" verdict)
  cmp -s <(grep '^step ' "$logs/torch-eager.log") <(grep '^step ' "$logs/torch-dump.log") && same=yes
  if [ $rc -eq 0 ] && [ "$v" = '"identical"' ] && [ $same = yes ]; then
    row "results unchanged with dumping on" "pass" "trace identical to the eager run, same losses"
  else
    row "results unchanged with dumping on" "fail" "diff exit $rc verdict $v, losses same: $same (eager run deterministic? see logs)"
  fi
}

# Watch mode as `numtrace run --watch=full --steps 2` runs it: a
# digest per step, host memory flat after the warm-up (ids and records must
# not pile up), and the digests of step 2 equal to its kernel records.
part2_watch() {
  if [ ! -x "$nt" ]; then row "watch torch --watch=full" "fail" "bin/numtrace not in the bundle"; return; fi
  traced watch-full env NUMTRACE_CHECK_NO_MARK=1 "$nt" run -o "$traces/watch-full" --watch=full --steps 2 -- \
    python3 "$tdir/torch_transformer.py" --mode eager --steps 30
  ran "watch torch --watch=full" watch-full $? || return
  local rc d status=pass; d=$(val watch-full digests)
  { positive "$d" && [ "$d" -ge 30 ]; } || status=fail
  row "watch torch --watch=full" "$status" "$d digests for $(val watch-full digest_kernels) launches, $(stat -c %s "$(main_trace "$traces/watch-full")" 2>/dev/null || echo 0) B, step $(step_ms "$logs/watch-full.log") ms"
  local r0 r1 rg; read -r r0 r1 rg < <(rss_growth "$logs/watch-full.log")
  row "watch host RSS growth" "info" "${rg:-?} KB from step 5 to 29 (${r0:-?} -> ${r1:-?} KB); watch ids/records must not pile up"
  step watch-diff "$bin/numtrace-diff" "$traces/watch-full" "$traces/watch-full" --json "$reports/watch-diff.json" --force --quiet
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "watch full digests vs step 2 in full" watch-diff; return; }
  local suspect; suspect=$(python3 "$ct" strings "$reports/watch-diff.json" 2>/dev/null | grep -m1 suspect)
  if [ $rc -eq 0 ] && [ -s "$reports/watch-diff.json" ] && [ -z "$suspect" ]; then
    row "watch full digests vs step 2 in full" "pass" "identical, digests agree with the kernel records"
  else
    row "watch full digests vs step 2 in full" "fail" "exit $rc: ${suspect:-verdict $(jfind "$reports/watch-diff.json" verdict)}"
  fi
}

if [ "$part" = 2 ]; then
  if [ $gpu -eq 1 ]; then part2_figures; else row "bench (all)" "skip" "no GPU"; fi
  section_end
  if [ $gpu -eq 1 ] && [ $python_torch -eq 1 ]; then
    part2_torch; section_end
    part2_dump; section_end
    part2_watch; section_end
  else
    row "torch, provenance, dumps, watch (all)" "skip" "needs a GPU and python3 with torch"
  fi
fi

# ============================================================================
# PART 3: operator level on CUDA; the allocators - the train step under
# cudaMallocAsync, reduce-overhead under both allocators, the tensor map's
# PyTorch side
# ============================================================================

# Operator level on CUDA as `numtrace run --ops --watch --steps 1` runs it
# (the hooks' dispatch mode, no CUPTI): a small MLP's 3 SGD steps on the GPU
# (NUMTRACE_CHECK_OPS_DEVICE=cpu: on the CPU, to check these rows without
# one). Step 1 in full: its op records' tensors on the device all measured
# (stats), none dropped, none left out (a note); every step digested per
# operator call, no call lost (a tensor numtrace could not measure).
part3_ops() {
  local dev=${NUMTRACE_CHECK_OPS_DEVICE:-cuda}
  local ops="--ops: $dev tensors measured" digested="--ops --watch: $dev calls digested"
  if [ ! -x "$nt" ]; then row "$ops" "fail" "bin/numtrace not in the bundle"; return; fi
  traced ops-cuda env NUMTRACE_CHECK_NO_MARK=1 "$nt" run -o "$traces/ops-cuda" --ops --watch --steps 1 -- \
    python3 "$tdir/torch_checks.py" ops "$dev"
  local rc=$?
  # 77: torch_checks.py found no CUDA (numtrace's own line comes last in the log).
  [ $rc -eq 77 ] && { row "$ops" "fail" "exit 77: python3's torch has no CUDA here, nothing ran on $dev"; return; }
  ran "$ops" ops-cuda $rc || return
  local n m d lost left k
  n=$(val ops-cuda "op_buffers.$dev"); m=$(val ops-cuda "op_measured.$dev")
  left=$(val ops-cuda note_op_unmeasured); [ "$left" = "?" ] && left=""  # no such note
  if [ "$(val ops-cuda level)" = ops ] && positive "$n" && [ "$m" = "$n" ] && [ "$(val ops-cuda dropped)" = 0 ] && [ -z "$left" ]; then
    row "$ops" "pass" "$(val ops-cuda op_records) op records in step 1, all $n $dev tensors measured"
  else
    row "$ops" "fail" "level $(val ops-cuda level), $m of $n $dev tensors measured in $(val ops-cuda op_records) op records, dropped $(val ops-cuda dropped)${left:+; $left}"
  fi
  d=$(val ops-cuda digests); k=$(val ops-cuda digest_kernels); lost=$(val ops-cuda digests_lost)
  if positive "$d" "$k" && [ "$d" -ge 3 ] && [ "$lost" = 0 ]; then
    row "$digested" "pass" "$d step digests of $k operator calls, none lost"
  else
    row "$digested" "fail" "$d step digests (3 steps ran) of $k operator calls, $lost lost${left:+; $left}"
  fi
  footer "operator level" ops-cuda
}

# The train step under cudaMallocAsync (`numtrace run --allocator async`).
part3_async_step() {
  local tc="$tdir/torch_checks.py" rc
  step step-plain-async env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 "$tc" train-step "$work/step-plain-async.sha"
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "torch train step (async): params bitwise equal" step-plain-async; return; }
  traced step-async env LD_PRELOAD="$lib" NUMTRACE_STEPS=1 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
    NUMTRACE_OUTPUT_DIR="$traces/step-async" python3 "$tc" train-step "$work/step-async.sha"
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "torch train step (async): params bitwise equal" step-async; return; }
  ran "torch train step (async) under numtrace" step-async $rc || return
  verdict "torch train step (async): params bitwise equal" "cudaMallocAsync, with and without numtrace" \
    "parameters differ (or the plain run failed)" same_bytes "$work/step-plain-async.sha" "$work/step-async.sha"
  verdict "torch train step (async): no drops, ranges confirmed" "$(val step-async kernel_records) kernels" \
    "kernels $(val step-async kernel_records), dropped $(val step-async dropped), ranges_unconfirmed $(val step-async counter.ranges_unconfirmed)" \
    clean step-async
}

# torch.compile(mode="reduce-overhead"): under cudaMallocAsync PyTorch is
# expected to refuse CUDA graph trees (the row says what it did); under the
# caching allocator with the hooks it must run, the map attached.
part3_reduce_overhead() {
  local tc="$tdir/torch_checks.py"
  traced ro-async env LD_PRELOAD="$lib" NUMTRACE_STEPS=all PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
    NUMTRACE_OUTPUT_DIR="$traces/ro-async" python3 "$tc" reduce-overhead
  ro_row ro-async $? "compile reduce-overhead (cudaMallocAsync)" info kernels_in_graphs 'error|not supported|cudaMallocAsync'
  traced ro-caching env LD_PRELOAD="$lib" NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR="$traces/ro-caching" "${hooks_env[@]}" \
    python3 "$tc" reduce-overhead
  ro_row ro-caching $? "compile reduce-overhead (caching, map)" pass tensor_events 'error'
}
# ro_row NAME RC CHECK STATUS COUNTER PATTERN: the row of reduce-overhead
# step NAME (status RC): STATUS when it ran, with the trace's graph launches
# and COUNTER; else fail with the first line of its log matching PATTERN.
ro_row() {
  case $2 in
    "$NOT_RUN") oot "$3" "$1" ;;
    0) row "$3" "$4" "ran; graph_launches $(val "$1" counter.graph_launches), $5 $(val "$1" "counter.$5")" ;;
    *) row "$3" "fail" "exit $2: $(grep -m1 -iE "$6" "$logs/$1.log" | cut -c1-100)" ;;
  esac
}

# The tensor map's PyTorch side with the fake libnumtrace (bin/libfake_numtrace.so
# logs every C API call): test/tensor_map_check.py per mode says pass/fail;
# eager's output equal to a run without the hooks.
part3_tensor_map_fake() {
  local fake="$bin/libfake_numtrace.so" mode conf calls res out plain_out rc
  if [ ! -e "$fake" ]; then row "tensor map with the fake library" "skip" "needs bin/libfake_numtrace.so"; return; fi
  step tmap-plain python3 "$tdir/tensor_map_check.py" plain
  [ $? -eq $NOT_RUN ] && { oot "tensor map with the fake library" tmap-plain; return; }
  plain_out=$(grep '^output ' "$logs/tmap-plain.log" | tail -1)
  for mode in eager expandable; do
    conf=""; [ $mode = expandable ] && conf="expandable_segments:True"
    calls="$logs/tmap-$mode.calls"; rm -f "$calls"
    step "tmap-$mode" env NUMTRACE_LIB_PATH="$fake" FAKE_NUMTRACE_LOG="$calls" FAKE_NUMTRACE_TENSOR_MAP=1 \
      PYTHONPATH="$hooks${PYTHONPATH:+:$PYTHONPATH}" ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} \
      python3 "$tdir/tensor_map_check.py" $mode
    rc=$?
    [ $rc -eq $NOT_RUN ] && { oot "tensor map $mode" "tmap-$mode"; continue; }
    res=$(grep '^result ' "$logs/tmap-$mode.log" | tail -1)
    out=$(grep '^output ' "$logs/tmap-$mode.log" | tail -1)
    if [ -z "$res" ]; then row "tensor map $mode" "fail" "$(why $rc "$logs/tmap-$mode.log")"; continue; fi
    res=${res#result }
    row "tensor map $mode" "${res%% *}" "$(echo "${res#* }" | cut -c1-200)"
    if [ $mode = eager ] && [ "${res%% *}" != skip ]; then
      if [ -n "$plain_out" ] && [ "$out" = "$plain_out" ]; then row "tensor map eager output unchanged" "pass" "same bytes as without the hooks"
      else row "tensor map eager output unchanged" "fail" "hooks '${out:-none}' vs plain '${plain_out:-none}'"; fi
    fi
  done
}

# ============================================================================
# PART 4: pause and trim, watch cost, the numtrace command
# ============================================================================

# Benchmarks run paused and pool trims reach numtrace: a max-autotune
# compile benchmarks its choices with measurement paused (footer
# launches_paused > 0: the hooks' pause reached Inductor's benchmarker or
# Triton's do_bench), and empty_cache
# under cudaMallocAsync raises a pool-trim callback (pool_trims > 0: the
# range cache is cleared) without faulting the job.
part4_pause_trim() {
  local py="$work/pause_trim.py"
  cat >"$py" <<'PY'
import torch
x = torch.randn(1024, 1024, device="cuda")
f = torch.compile(lambda a: (a @ a).relu(), mode="max-autotune-no-cudagraphs")
for _ in range(3):
    y = f(x)
torch.cuda.synchronize()
z = [torch.ones(1 << 20, device="cuda") for _ in range(8)]
del z
torch.cuda.empty_cache()  # cudaMemPoolTrimTo under cudaMallocAsync
print("sum", float((y * 2).sum()))
PY
  traced pause-trim env LD_PRELOAD="$lib" NUMTRACE_STEPS=all PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
    NUMTRACE_OUTPUT_DIR="$traces/pause-trim" "${hooks_env[@]}" python3 "$py"
  ran "autotune benchmarks paused" pause-trim $? || return
  local p t; p=$(val pause-trim counter.launches_paused); t=$(val pause-trim counter.pool_trims)
  verdict "autotune benchmarks paused" "launches_paused $p, kernels $(val pause-trim kernel_records)" \
    "launches_paused $p: no benchmark ran paused (the hook points of scripts/hooks/numtrace_bench_pause.py for this torch)" \
    positive "$p"
  verdict "pool trim clears the range cache" "pool_trims $t, ranges_unconfirmed $(val pause-trim counter.ranges_unconfirmed)" \
    "pool_trims $t: neither cuMemPoolTrimTo nor cudaMemPoolTrimTo raised a callback" positive "$t"
  footer "pause and trim" pause-trim
}

# torch.profiler (kineto) started in a job numtrace captures. Read in kineto's source: the profile still gets its kernels
# (the Activity API needs no subscriber), and kineto's buffer callbacks
# replace numtrace's, which numtrace must say (one line, "stopped reaching
# numtrace", activity_unavailable = 1). The rows say what really happens.
part4_profiler() {
  local py="$work/profiler_check.py"
  cat >"$py" <<'PY'
import sys
import torch
from torch.profiler import profile, ProfilerActivity
sys.path.insert(0, sys.argv[1])
from torch_checks import mark_step
x = torch.randn(2048, 2048, device="cuda")
w = torch.randn(2048, 2048, device="cuda")
def step():
    y = (x @ w).relu().sum()
    torch.cuda.synchronize()
    mark_step()
    return y
for _ in range(3):
    step()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(20):
        step()
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("profiler_kernels", len(kernels))
print("profiler_own_kernels", sum("numtrace" in e.name for e in kernels))
for _ in range(20):
    step()
PY
  traced profiler env LD_PRELOAD="$lib" NUMTRACE_STEPS=all NUMTRACE_OUTPUT_DIR="$traces/profiler" \
    python3 "$py" "$tdir"
  ran "torch.profiler under numtrace" profiler $? || return
  local k own said
  k=$(awk '$1 == "profiler_kernels" { print $2 }' "$logs/profiler.log")
  own=$(awk '$1 == "profiler_own_kernels" { print $2 }' "$logs/profiler.log")
  verdict "torch.profiler under numtrace" "the profile has ${k} GPU kernels (${own:-?} of numtrace's reductions)" \
    "the profile has no GPU kernel (numtrace kept CUPTI's activity buffers?)" positive "$k"
  said=$(grep -m1 -oE 'stopped reaching numtrace|did not allocate' "$logs/profiler.log")
  if [ -n "$said" ]; then
    row "numtrace says the profiler took its records" "pass" "'$said'; activity_unavailable $(val profiler counter.activity_unavailable), activity_kernels $(val profiler counter.activity_kernels)"
  else
    row "numtrace says the profiler took its records" "fail" "no line; activity_unavailable $(val profiler counter.activity_unavailable), activity_kernels $(val profiler counter.activity_kernels), unmeasured $(val profiler unmeasured)"
  fi
  footer "torch.profiler" profiler
}

# Watch cost: 30 eager steps plain and under --watch (sampled), per-step time.
part4_watch_cost() {
  step watch-plain python3 "$tdir/torch_transformer.py" --mode eager --steps 30
  ran "watch torch plain" watch-plain $? || return
  row "watch torch plain" "info" "step $(step_ms "$logs/watch-plain.log") ms (median from step 3)"
  traced watch-sampled env NUMTRACE_CHECK_NO_MARK=1 "$nt" run -o "$traces/watch-sampled" --watch -- \
    python3 "$tdir/torch_transformer.py" --mode eager --steps 30
  ran "watch torch --watch (sampled)" watch-sampled $? || return
  local rc r0 r1 rg; read -r r0 r1 rg < <(rss_growth "$logs/watch-sampled.log")
  row "watch torch --watch (sampled)" "info" "$(val watch-sampled digests) digests, step $(step_ms "$logs/watch-sampled.log") ms, host RSS +${rg:-?} KB from step 5"
  rm -rf "$traces/watch-hunt"
  step watch-hunt "$nt" twice -o "$traces/watch-hunt" --watch -- "$bin/mlp_train" --steps 3 --nondeterministic
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "numtrace twice --watch mlp_train --nondet" watch-hunt; return; }
  # twice's summary of the two watch runs: the first differing step and its first differing launch.
  local sum="$traces/watch-hunt/summary.json" at first
  at=$(jfind "$sum" steps.first_differing); first=$(jfind "$sum" steps.first_kernel.a_name)
  if [ $rc -eq 1 ] && [[ "$first" == *weight_grad_atomic* ]]; then
    row "numtrace twice --watch mlp_train --nondet" "pass" "exit 1: first differing step $at at ${first:0:80}"
  elif [ -n "$at" ]; then
    row "numtrace twice --watch mlp_train --nondet" "fail" "exit $rc: first differing step $at at ${first:0:80}, want weight_grad_atomic"
  else
    row "numtrace twice --watch mlp_train --nondet" "fail" "exit $rc: $(tail -2 "$logs/watch-hunt.log" | tr '\n' ' ' | cut -c1-100)"
  fi
}

# The numtrace command: doctor; two ranks under torchrun, --across-ranks.
part4_command() {
  step doctor "$nt" doctor -o "$work/doctor"
  local rc=$?
  if [ $rc -eq $NOT_RUN ]; then oot "numtrace doctor" doctor
  elif [ $rc -eq 0 ] && grep -q 'numtrace can capture here' "$logs/doctor.log"; then
    row "numtrace doctor" "pass" "$(grep -E '^(GPU|CUPTI) ' "$logs/doctor.log" | tr -s ' ' | cut -c1-100 | tr '\n' ';')"
  else
    row "numtrace doctor" "fail" "exit $rc: $(grep -E 'FAIL|cannot' "$logs/doctor.log" | head -2 | tr -s ' ' | tr '\n' ' ' | cut -c1-110)"
  fi
  traced ranks-run "$nt" run -o "$traces/ranks-run" --steps all -- \
    python3 -m torch.distributed.run --nproc-per-node 2 "$tdir/replica_train.py"
  ran "torchrun 2 ranks --across-ranks" ranks-run $? || return
  step ranks-diff "$bin/numtrace-diff" --across-ranks "$traces/ranks-run" --json "$reports/ranks.json" -o "$reports/ranks.html" --force
  rc=$?
  [ $rc -eq $NOT_RUN ] && { oot "torchrun 2 ranks --across-ranks" ranks-diff; return; }
  if [ $rc -eq 0 ]; then
    row "torchrun 2 ranks --across-ranks" "pass" "exit 0: $(grep -E '^verdict|kernels with inputs' "$logs/ranks-diff.log" | tr '\n' ' ' | cut -c1-100)"
  else
    row "torchrun 2 ranks --across-ranks" "fail" "exit $rc (want 0): $(tail -2 "$logs/ranks-diff.log" | tr '\n' ' ' | cut -c1-100)"
  fi
}

if [ "$part" = 3 ]; then
  if [ $gpu -eq 1 ] && [ $python_torch -eq 1 ]; then
    part3_ops; section_end
    part3_async_step; section_end
    part3_reduce_overhead; section_end
    part3_tensor_map_fake
  else
    row "part 3 (all)" "skip" "needs a GPU and python3 with torch"
  fi
fi
if [ "$part" = 4 ]; then
  if [ $gpu -eq 1 ] && [ $python_torch -eq 1 ]; then
    part4_pause_trim; section_end
    part4_profiler; section_end
    if [ -x "$nt" ]; then part4_watch_cost; section_end; part4_command
    else row "watch cost, doctor, 2 ranks" "fail" "bin/numtrace not in the bundle"; fi
  else
    row "part 4 (all)" "skip" "needs a GPU and python3 with torch"
  fi
fi
# finish (the EXIT trap) prints the summary line, packs and sets the status.
