#!/usr/bin/env python3
# File: test/gpu/replica_train.py
#
# Data-parallel replicas without collectives, for scripts/gpu-check.sh's
# cross-rank row: every rank (started by torchrun) trains the same small
# model on the same data with the same seed, as replicas do after the
# gradient all-reduce, so `numtrace-diff --across-ranks` must find them
# consistent. With --nondeterministic the bias gradient is accumulated with
# index_add_ (CUDA atomics): the replicas then disagree on equal inputs, at
# those kernels. One GPU serves all ranks (no NCCL needed). Step marks come
# from the PyTorch hooks (`numtrace run` puts them on PYTHONPATH).
# Exit 77: no CUDA.
#
# Example:
#   numtrace run -o ddp --steps all -- python3 -m torch.distributed.run --nproc-per-node 2 replica_train.py
import argparse
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--nondeterministic", action="store_true")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("replica_train: no CUDA", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 16)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    x = torch.randn(4096, 64, device=dev)
    y = torch.randint(0, 16, (4096,), device=dev)
    rows = torch.zeros(4096, dtype=torch.long, device=dev)
    for step in range(args.steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if args.nondeterministic:
            # Re-derive the last bias gradient by scattering every row into
            # one slot: atomicAdd order varies from run to run and rank to rank.
            g = torch.autograd.grad(torch.nn.functional.cross_entropy(model(x), y), model[2].bias)[0]
            per_row = g.expand(4096, -1) / 4096
            acc = torch.zeros(1, 16, device=dev).index_add_(0, rows, per_row)
            model[2].bias.grad.copy_(acc[0])
        opt.step()
        opt.zero_grad()
        print(f"rank {os.environ.get('RANK', '0')} step {step} loss {loss.item():.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
