#!/usr/bin/env bash
# The torch hooks call numtrace_mark_step after each optimizer step and
# annotate Triton kernels with their pointer dtypes - checked against fake
# torch/triton modules and a fake libnumtrace that logs its calls.
set -euo pipefail
src="$1" fake_lib="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
export FAKE_NUMTRACE_LOG="$tmp/calls.log" NUMTRACE_LIB_PATH="$fake_lib"
export PYTHONPATH="$src/scripts/hooks:$src/test/scripts/fake"
python3 - <<'PY'
import torch.optim.optimizer as o
from triton.compiler.compiler import CompiledKernel
opt = o.Optimizer()
opt.step(); opt.step()
CompiledKernel("triton_poi_fused_add_0", {"in_ptr0": "*bf16", "out_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"})
PY
# The Triton hook also announces the ATen ops of an Inductor-named kernel.
expected=$'mark_step \nmark_step \nannotate triton_poi_fused_add_0 bf16,f32,raw\nops triton_poi_fused_add_0 aten::add'
actual="$(cat "$tmp/calls.log")"
if [ "$actual" != "$expected" ]; then
  echo "hooks_test: expected:"; echo "$expected"; echo "got:"; echo "$actual"; exit 1
fi
# Without a loadable library the hooks stay out of the way.
NUMTRACE_LIB_PATH=/nonexistent/libnumtrace.so python3 -c 'import torch.optim.optimizer as o; o.Optimizer().step(); print("ok")' | grep -qx ok
echo "hooks_test: 2 passed, 0 failed"
