#!/usr/bin/env bash
# The hooks' sitecustomize runs the user's own `sitecustomize` - a module or
# a package - found further on PYTHONPATH, as Python would have without
# numtrace (issue 15: a package no longer ran).
#   hooks_chain_test.sh SOURCE_DIR
set -uo pipefail
src="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
export NUMTRACE_LIB_PATH=/nonexistent/libnumtrace.so  # the hooks themselves stay off

# A package with a relative import.
mkdir -p "$tmp/pkg/sitecustomize"
echo 'from . import helper' >"$tmp/pkg/sitecustomize/__init__.py"
echo 'import os; open(os.environ["MARK"], "w").write("package")' >"$tmp/pkg/sitecustomize/helper.py"
MARK="$tmp/m1" PYTHONPATH="$src/scripts/hooks:$tmp/pkg" python3 -c 'import sitecustomize, sys; print(sitecustomize.__name__, hasattr(sitecustomize, "__path__"))' >"$tmp/o1" 2>&1
[ "$(cat "$tmp/m1" 2>/dev/null)" = package ] && ok || bad "a sitecustomize package did not run: $(cat "$tmp/o1")"
[ "$(cat "$tmp/o1")" = "sitecustomize True" ] && ok || bad "import sitecustomize is not the user's package: $(cat "$tmp/o1")"

# A module.
mkdir -p "$tmp/mod"
echo 'import os; open(os.environ["MARK"], "w").write("module")' >"$tmp/mod/sitecustomize.py"
MARK="$tmp/m2" PYTHONPATH="$src/scripts/hooks:$tmp/mod" python3 -c 'pass'
[ "$(cat "$tmp/m2" 2>/dev/null)" = module ] && ok || bad "a sitecustomize module did not run"

# A failing one: site.py's words, and the job still runs.
mkdir -p "$tmp/err"
echo 'raise RuntimeError("user boom")' >"$tmp/err/sitecustomize.py"
PYTHONPATH="$src/scripts/hooks:$tmp/err" python3 -c 'print("job ran")' >"$tmp/o3" 2>"$tmp/e3"
grep -qx "job ran" "$tmp/o3" && ok || bad "the job did not run after a failing sitecustomize"
[ "$(cat "$tmp/e3")" = $'Error in sitecustomize; set PYTHONVERBOSE for traceback:\nRuntimeError: user boom' ] && ok \
  || bad "a failing sitecustomize: $(cat "$tmp/e3")"

echo "hooks_chain_test: $passed passed, $failed failed"
[ "$failed" = 0 ]
