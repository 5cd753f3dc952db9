"""Writes the DebugMode JSON logs under test/data/debugmode-json/ with the
real torch (torch.utils._debug_mode.DebugMode.save_logs), which
numtrace-diff's `debugmode-json` reader (analyzer/read/debugmode_json_reader.cc)
and its tests read.

    ~/.cache/numtrace/venv-torch/bin/python test/scripts/torch/make_debugmode_json.py OUT_DIR

One training step (forward, backward, AdamW as constructed by default: on
the CPU its for-loop form, foreach being the default only on GPUs) of a
small attention block, logged with
`DebugMode(record_nn_module=True)` and
`log_tensor_hashes(hash_fn=["norm", "hash_tensor"], hash_inputs=True)`: per
op its output and input hashes (a float64 L1 norm and torch.hash_tensor),
module boundaries as `annotate` records. After the step one Triton-style
kernel record is added the way Inductor adds it (DebugMode.record_triton_kernel,
pre-launch hashes, the launch, finalize's post-launch hashes) on the CPU.

Runs (one file each, `<name>.json`):
  base      the reference
  same      the same step again: identical
  constant  a planted wrong constant: the attention scale 1/sqrt(d) * 1.01
            in module `attn` (diverged at attn's first op using it)
  mask      a planted mask bug: the causal mask one diagonal off, in `attn`
  longer    one more layer: the op streams have different lengths and part
            at the extra layer
Deterministic (seeded, CPU, one thread): rerunning gives the same bytes.
"""
import os
import sys

import torch
from torch.utils._debug_mode import DebugMode

DIM, SEQ, HEADS = 8, 6, 2


class Attention(torch.nn.Module):
    def __init__(self, scale_factor=1.0, mask_offset=0):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)
        self.scale_factor = scale_factor
        self.mask_offset = mask_offset

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scale = (DIM ** -0.5) * self.scale_factor
        scores = (q @ k.transpose(-2, -1)) * scale
        mask = torch.ones(SEQ, SEQ, dtype=torch.bool).triu(1 + self.mask_offset)
        scores = scores.masked_fill(mask, float("-inf"))
        return self.proj(scores.softmax(dim=-1) @ v)


class Block(torch.nn.Module):
    def __init__(self, **attn):
        super().__init__()
        self.norm = torch.nn.LayerNorm(DIM)
        self.attn = Attention(**attn)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 2 * DIM), torch.nn.GELU(), torch.nn.Linear(2 * DIM, DIM))

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return x + self.mlp(x)


class Model(torch.nn.Module):
    def __init__(self, layers=1, **attn):
        super().__init__()
        self.layers = torch.nn.ModuleList([Block(**attn) for _ in range(layers)])
        self.head = torch.nn.Linear(DIM, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class CpuDevice:
    """What _TritonKernelCall.finalize asks of a device interface."""

    @staticmethod
    def synchronize(device=None):
        pass

    @staticmethod
    def current_device():
        return 0


def run(path, layers=1, **attn):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.randn(SEQ, DIM)
    target = torch.randn(SEQ, 1)
    model = Model(layers, **attn)
    # The head drawn apart from the layers: an extra layer changes no other weight.
    torch.manual_seed(1)
    model.head.reset_parameters()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    with DebugMode(record_nn_module=True) as dm, DebugMode.log_tensor_hashes(
        hash_fn=["norm", "hash_tensor"], hash_inputs=True
    ):
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        # A kernel record as Inductor writes one around a Triton launch
        # (Inductor's launcher runs outside the dispatcher: so do the hashes
        # and the "kernel" here, or they would be logged as ops).
        with torch.utils._python_dispatch._disable_current_modes():
            src = model.head.weight.detach().clone()
            out = torch.zeros_like(src)
            call = dm.record_triton_kernel("triton_poi_fused_mul_0", {"in_ptr0": src, "out_ptr0": out})
            torch.mul(src, 2.0, out=out)
            call.finalize(CpuDevice())
    DebugMode.save_logs(dm.logs, path)
    return len(dm.logs)


RUNS = {
    "base": {},
    "same": {},
    "constant": {"scale_factor": 1.01},
    "mask": {"mask_offset": 1},
    "longer": {"layers": 2},
}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, kwargs in RUNS.items():
        n = run(os.path.join(out_dir, name + ".json"), **kwargs)
        print(f"{name}: {n} records")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../data/debugmode-json"))
