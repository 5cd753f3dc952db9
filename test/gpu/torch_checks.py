#!/usr/bin/env python3
# File: test/gpu/torch_checks.py
#
# The PyTorch rows of scripts/gpu-check.sh, one subcommand each, every one
# printing "result KEY VALUE" lines the check script reads. None of this has
# run on a GPU yet. Exit 77: no CUDA here (`ops cpu` needs none).
#
#   train-step OUT.txt   a few layers of hidden size 2048 in bf16, eager, one
#                        optimizer step; writes a hash of every parameter's
#                        bytes after the step (run it with and without the
#                        shim: the files must be equal).
#   reduce-overhead      torch.compile(mode="reduce-overhead") for a few steps
#                        (CUDA graph trees) under whatever allocator the
#                        environment chose; prints whether it ran.
#   nccl                 init_process_group("nccl") with world size 1 and an
#                        all_reduce; the check script looks for the NCCL kernel.
#   ops [DEVICE]         a small MLP (Linear, GELU, LayerNorm) trained 3 steps
#                        with SGD on DEVICE (cuda, or cpu for a check without
#                        a GPU), as `numtrace run --ops` captures it: every
#                        operator call's tensors on DEVICE.
#
# Every subcommand marks a step after each iteration (numtrace_mark_step,
# a no-op without the shim) unless NUMTRACE_CHECK_NO_MARK=1: set it under the
# PyTorch hooks, which mark one themselves.
#
# Example:
#   LD_PRELOAD=libnumtrace.so NUMTRACE_STEPS=1 python3 torch_checks.py train-step with.txt
import ctypes
import hashlib
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def mark_step():
    """numtrace_mark_step() when the shim is loaded, else nothing.

    Nothing, too, with NUMTRACE_CHECK_NO_MARK=1: under the PyTorch hooks,
    which mark a step after every optimizer.step(), a second mark would make
    each iteration two steps, the second one without kernels.
    """
    if os.environ.get("NUMTRACE_CHECK_NO_MARK") == "1":
        return
    try:
        fn = ctypes.CDLL(None).numtrace_mark_step
    except (AttributeError, OSError):
        return
    fn()


def model(torch, layers=4, hidden=2048):
    torch.manual_seed(0)
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(hidden, hidden), torch.nn.GELU(), torch.nn.LayerNorm(hidden)]
    return torch.nn.Sequential(*blocks).cuda().to(torch.bfloat16)


def train_step(out_path):
    import torch
    torch.use_deterministic_algorithms(True)
    m = model(torch)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    x = torch.randn(64, 2048, device="cuda", dtype=torch.bfloat16, generator=None)
    # Step 0 warms up (cuBLAS handles, allocator); step 1 is the captured one.
    for step in range(2):
        loss = m(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        mark_step()
        print(f"step {step} loss {loss.item():.9g}")
    h = hashlib.sha256()
    for name, p in m.named_parameters():
        h.update(name.encode())
        h.update(p.detach().view(torch.uint8).cpu().numpy().tobytes())
    with open(out_path, "w") as f:
        f.write(h.hexdigest() + "\n")
    print("result params_sha256", h.hexdigest())


def reduce_overhead():
    import torch
    m = model(torch, layers=2, hidden=1024)
    x = torch.randn(32, 1024, device="cuda", dtype=torch.bfloat16)
    f = torch.compile(m, mode="reduce-overhead")
    for step in range(4):
        with torch.no_grad():
            y = f(x)
        torch.cuda.synchronize()
        mark_step()
    print("result allocator", os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(default)"))
    print("result ran", float(y.float().sum()))


def nccl():
    import torch
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1)
    t = torch.ones(1 << 20, device="cuda")
    # NCCL may skip the kernel of an in-place SUM on one rank; AVG scales,
    # so it needs one (which NCCL kernel runs there is itself a question).
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.AVG):
        dist.all_reduce(t, op=op)
        torch.cuda.synchronize()
        mark_step()
    print("result sum", float(t.sum()))
    dist.destroy_process_group()


def ops(device):
    import torch
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.LayerNorm(128),
                            torch.nn.Linear(128, 1)).to(device)
    opt = torch.optim.SGD(m.parameters(), lr=1e-2, momentum=0.9)
    x = torch.randn(32, 64, device=device)
    y = torch.randn(32, 1, device=device)
    for step in range(3):
        loss = torch.nn.functional.mse_loss(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        mark_step()
        print(f"step {step} loss {loss.item():.9g}")
    print("result device", x.device)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        import torch
        if not (cmd == "ops" and sys.argv[2:] == ["cpu"]) and not torch.cuda.is_available():
            print("no CUDA", file=sys.stderr)
            return 77
    except ImportError as e:
        print(f"no torch: {e}", file=sys.stderr)
        return 77
    if cmd == "train-step" and len(sys.argv) == 3:
        train_step(sys.argv[2])
    elif cmd == "reduce-overhead":
        reduce_overhead()
    elif cmd == "nccl":
        nccl()
    elif cmd == "ops" and len(sys.argv) <= 3:
        ops(sys.argv[2] if len(sys.argv) == 3 else "cuda")
    else:
        print(__doc__ if __doc__ else "usage: torch_checks.py train-step OUT | reduce-overhead | nccl | ops [DEVICE]",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
