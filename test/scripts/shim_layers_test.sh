#!/usr/bin/env bash
# shim/'s headers include only downwards (README, "Layout"; issue 23): the
# engine owns the seams it calls (Device, EventSink, RangeOracle) and
# includes nothing of driver/, device/, cupti/ or api/; driver/ nothing of
# device/, cupti/ or api/; device/ and cupti/ not each other.
#   shim_layers_test.sh SOURCE_DIR
set -uo pipefail
shim="$1/shim"
failed=0
# forbid FOLDER LOWER...: no file of shim/FOLDER includes a shim/LOWER header.
forbid() {
  local folder=$1; shift
  for up in "$@"; do
    local hits; hits=$(grep -rn "#include \"shim/$up/" "$shim/$folder" 2>/dev/null)
    if [ -n "$hits" ]; then echo "FAIL: shim/$folder includes shim/$up/:"; echo "$hits"; failed=1; fi
  done
}
forbid engine driver device cupti api
forbid writer driver device cupti api engine
forbid log driver device cupti api engine writer
forbid reduce driver device cupti api engine writer
forbid driver device cupti api
forbid device cupti api
forbid cupti device api
[ -d "$shim/driver" ] || { echo "FAIL: no shim/driver"; failed=1; }
[ $failed -eq 0 ] && echo "shim_layers_test: every include goes downwards"
exit $failed
