#!/usr/bin/env bash
# scripts/test-torch.sh where the real-torch tests cannot run: under CI (CI
# set) that is a failure in one line, elsewhere one plain NOT RUN line and
# exit 0; a deliberate NUMTRACE_SKIP_TORCH_TESTS=1 is not run under CI too;
# a ready venv's test result is the script's exit status. A fake python3
# stands in (its venv's pip fails as pip does without the package index),
# so nothing is downloaded.
#   test_torch_script_test.sh SOURCE_DIR
set -uo pipefail
src="$(cd "$1" && pwd)"
script="$src/scripts/test-torch.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# A build directory as far as the script looks at one.
mkdir -p "$tmp/build/test-bin" "$tmp/build/bin"
touch "$tmp/build/test-bin/libfake_numtrace.so" "$tmp/build/bin/numtrace"
# python3 -m venv DIR makes DIR/bin/pip, which fails like pip offline;
# NOVENV=1: the venv module is missing.
cat >"$tmp/python3" <<'EOF'
#!/bin/sh
[ "${NOVENV:-0}" = 1 ] && { echo "No module named venv" >&2; exit 1; }
[ "$1" = -m ] && [ "$2" = venv ] || exit 9
mkdir -p "$3/bin"
printf '#!/bin/sh\necho "WARNING: Retrying after connection broken"\necho "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)"\nexit 1\n' >"$3/bin/pip"
chmod +x "$3/bin/pip"
EOF
chmod +x "$tmp/python3"

# run NAME ENV... : the script's combined output in $tmp/NAME.out, status in $rc.
run() {
  local name="$1"; shift
  env -u CI -u NUMTRACE_SKIP_TORCH_TESTS PYTHON3="$tmp/python3" NUMTRACE_TORCH_VENV="$tmp/venv-$name" "$@" \
    "$script" "$tmp/build" >"$tmp/$name.out" 2>&1
  rc=$?
}
last() { tail -1 "$tmp/$1.out"; }
count() { grep -c "$2" "$tmp/$1.out"; }

# 1. Torch not installable, under CI: exit 1, one FAILED line naming pip's error, last.
run ci CI=true
[ "$rc" = 1 ] && ok || bad "CI, torch not installable: exit $rc, expected 1: $(cat "$tmp/ci.out")"
[ "$(count ci 'torch tests: FAILED')" = 1 ] && ok || bad "CI: not one FAILED line: $(cat "$tmp/ci.out")"
last ci | grep -q "^torch tests: FAILED: cannot run under CI (CI=true): could not install torch/triton/numpy from the package index: ERROR: Could not find a version" \
  && ok || bad "CI: the last line does not say why: $(last ci)"
grep -q "NOT RUN" "$tmp/ci.out" && bad "CI: NOT RUN said too" || ok
[ -e "$tmp/venv-ci" ] && bad "CI: a venv was left in place" || ok

# 2. The same elsewhere: exit 0 with one plain NOT RUN line.
run local
[ "$rc" = 0 ] && ok || bad "outside CI, torch not installable: exit $rc, expected 0"
last local | grep -q "^torch tests: NOT RUN: could not install torch/triton/numpy .*ERROR: Could not find.* (the hooks and the tensor map's Python side are untested)$" \
  && ok || bad "outside CI: $(last local)"
[ "$(count local 'torch tests: NOT RUN')" = 1 ] && ok || bad "outside CI: not one NOT RUN line"

# 3. CI=false is not CI; any other value is.
run cifalse CI=false
[ "$rc" = 0 ] && ok || bad "CI=false: exit $rc"
run ci1 CI=1
[ "$rc" = 1 ] && ok || bad "CI=1: exit $rc"

# 4. No venv module, and no python at all: the same rule.
run novenv CI=true NOVENV=1
[ "$rc" = 1 ] && last novenv | grep -q "^torch tests: FAILED: .*-m venv failed" && ok \
  || bad "CI, no venv module: exit $rc: $(last novenv)"
run nopython CI=true PYTHON3="$tmp/no-such-python3"
[ "$rc" = 1 ] && last nopython | grep -q "^torch tests: FAILED: .*no $tmp/no-such-python3 on PATH" && ok \
  || bad "CI, no python: exit $rc: $(last nopython)"

# 5. Deliberately not run: exit 0 and said, under CI too; nothing installed.
run optout CI=true NUMTRACE_SKIP_TORCH_TESTS=1
[ "$rc" = 0 ] && [ "$(cat "$tmp/optout.out")" = "torch tests: NOT RUN: NUMTRACE_SKIP_TORCH_TESTS=1" ] && ok \
  || bad "NUMTRACE_SKIP_TORCH_TESTS=1 under CI: exit $rc: $(cat "$tmp/optout.out")"
ls "$tmp" | grep -q venv-optout && bad "opt-out: a venv was begun: $(ls "$tmp")" || ok

# 6. A ready venv: its test run's status is the script's (a failing test fails it).
mkdir -p "$tmp/venv-ready/bin"
printf '#!/bin/sh\necho "torch_test: 0 passed, 1 failed, 0 skipped"\nexit 1\n' >"$tmp/venv-ready/bin/python"
chmod +x "$tmp/venv-ready/bin/python"
touch "$tmp/venv-ready/.numtrace-ready"
run ready
[ "$rc" = 1 ] && last ready | grep -q "1 failed" && ok || bad "a failing real-torch run: exit $rc: $(last ready)"

echo "test_torch_script_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
