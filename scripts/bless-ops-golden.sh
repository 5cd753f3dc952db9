#!/usr/bin/env bash
# Re-captures the numerics gate's golden trace (docs/walkthroughs.md, "7. A
# numerics gate without a GPU"): step 0 of test/scripts/torch/data/ops_model.py
# at operator level on the CPU, gzipped into test/data/ops_golden/. Run it
# when a change of the model's numbers is intended, and commit the result.
#
#   scripts/bless-ops-golden.sh [PYTHON]      (default: the torch venv's python)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${1:-${NUMTRACE_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/numtrace/venv-torch}/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && "$root/build/bin/numtrace" run -o "$tmp/golden" --ops --steps 0 --label golden -- \
   "$python" "$root/test/scripts/torch/data/ops_model.py" >/dev/null)
gzip -9n -c "$tmp/golden/rank_0.ntrace.jsonl" > "$root/test/data/ops_golden/rank_0.ntrace.jsonl.gz"
echo "blessed: test/data/ops_golden/rank_0.ntrace.jsonl.gz ($(wc -c < "$root/test/data/ops_golden/rank_0.ntrace.jsonl.gz") bytes)"
