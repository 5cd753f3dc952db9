#!/usr/bin/env python3
# File: test/gpu/torch_transformer.py
#
# A small transformer trained for a few steps with deterministic settings,
# eager or torch.compile'd, for scripts/gpu-check.sh: run it twice under
# libnumtrace.so (one trace each) and diff the traces. Marks a step after
# every optimizer step through numtrace_mark_step (ctypes; a no-op without
# the shim; none with --no-mark or NUMTRACE_CHECK_NO_MARK=1, as under the
# PyTorch hooks, which mark one themselves). Prints one "step N loss X" line
# per step, one "rss step N KB" line (the host's resident set, from
# /proc/self/status) and one "time step N MS" line (wall time since the
# previous step ended) per step. --no-sync: no host synchronisation inside the
# loop (the losses are read after it), so the host runs ahead of the GPU as
# a real job does. Exit 77: no CUDA.
#
# Example:
#   LD_PRELOAD=libnumtrace.so NUMTRACE_STEPS=2 python3 torch_transformer.py --mode compile
import argparse
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

from torch_checks import mark_step  # noqa: E402  (after the cuBLAS setting)


def rss_kb():
    """The process's resident set in KB (VmRSS), or -1 where /proc has none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--steps", type=int, default=4)
    # Under numtrace's PyTorch hooks, which mark a step after optimizer.step().
    ap.add_argument("--no-mark", action="store_true", help="do not call numtrace_mark_step (the hooks do)")
    ap.add_argument("--no-sync", action="store_true", help="read the losses after the loop, not in it")
    args = ap.parse_args()

    try:
        import torch
        from torch import nn
    except ImportError:
        print("no torch", file=sys.stderr)
        return 77

    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False

    class Model(nn.Module):
        def __init__(self, vocab=512, d=128, heads=4, layers=2, classes=16):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)).mean(dim=1))

    dev = torch.device("cuda")
    model = Model().to(dev)
    step_fn = model
    if args.mode == "compile":
        step_fn = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randint(0, 512, (32, 64), generator=g).to(dev)
    y = torch.randint(0, 16, (32,), generator=g).to(dev)
    losses = []
    last = time.monotonic()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(step_fn(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.no_sync:
            losses.append(loss.detach())
        else:
            print(f"step {step} loss {loss.item():.6f}", flush=True)
        now = time.monotonic()
        print(f"rss step {step} {rss_kb()}", flush=True)
        print(f"time step {step} {(now - last) * 1000:.3f}", flush=True)
        last = now
        if not args.no_mark:
            mark_step()
    torch.cuda.synchronize()
    for step, loss in enumerate(losses):
        print(f"step {step} loss {loss.item():.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
