#!/usr/bin/env python3
# File: test/gpu/tensor_map_check.py
#
# The tensor map rows of scripts/gpu-check.sh: the PyTorch side
# (scripts/hooks/numtrace_tensor_map.py and its allocator bridge) on a real
# CUDA job, with the fake libnumtrace (test/scripts/fake), which logs every
# C API call to $FAKE_NUMTRACE_LOG. Run under the hooks:
#
#   NUMTRACE_LIB_PATH=libfake_numtrace.so FAKE_NUMTRACE_LOG=calls.log FAKE_NUMTRACE_TENSOR_MAP=1 \
#   PYTHONPATH=scripts/hooks python3 tensor_map_check.py MODE
#
# MODE: eager (the default allocator settings), expandable (run it with
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: segments are mapped, not
# allocated), reduce-overhead (torch.compile(mode="reduce-overhead"): CUDA
# graph trees and their private pool, the case cudaMallocAsync cannot serve).
# MODE plain: without the hooks, only the output line (the row compares).
# Prints "output SHA256" (the model's first output's bytes) and one line
# "result pass|fail DETAIL". What it checks: one status(1); a tensor made
# before the attach comes from the snapshot with its requested size; one
# made after it is reported allocated (address, requested size) and, once
# deleted, freed; segment events were seen; reduce-overhead: the compiled
# output matches eager. None of this has run on a GPU yet. Exit 77: no CUDA.
import hashlib
import os
import sys

import torch


def calls(log):
    with open(log, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def events(lines):
    """[(action, device, address, bytes)] from the fake's 'tensor_event A D ADDR BYTES' lines."""
    out = []
    for line in lines:
        if line.startswith("tensor_event "):
            a, d, addr, size = line.split()[1:5]
            out.append((int(a), int(d), int(addr), int(size)))
    return out


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "eager"
    log = os.environ.get("FAKE_NUMTRACE_LOG")
    if not torch.cuda.is_available():
        print("result skip no CUDA")
        return 77
    torch.manual_seed(0)
    dev = torch.cuda.current_device()
    before = torch.empty(1000, dtype=torch.float32, device="cuda")   # made before the attach
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)).cuda()
    x = torch.randn(32, 64, device="cuda")
    with torch.no_grad():
        reference = model(x).clone()        # the first module forward with CUDA up: the attach
    torch.cuda.synchronize()
    print("output " + hashlib.sha256(bytes(reference.cpu().contiguous().view(torch.uint8).flatten().tolist()))
          .hexdigest())
    if mode == "plain":
        return 0
    if not log:
        print("result fail FAKE_NUMTRACE_LOG is not set")
        return 1
    status = [l for l in calls(log) if l.startswith("tensor_map_status ")]
    problems = []
    if len(status) != 1 or not status[0].startswith("tensor_map_status 1 "):
        print("result fail status calls: %s" % (status or "none"))
        return 1
    after_attach = len(calls(log))

    a = torch.empty(12345, dtype=torch.uint8, device="cuda")
    pa = a.data_ptr()
    del a
    torch.cuda.synchronize()

    out_ok = True  # eager: the row compares the output line with a plain run's
    if mode == "reduce-overhead":
        compiled = torch.compile(model, mode="reduce-overhead")
        with torch.no_grad():
            for _ in range(4):          # warm-up, record, replays
                got = compiled(x).clone()
        torch.cuda.synchronize()
        out_ok = torch.allclose(got, reference, rtol=1e-3, atol=1e-3)
    torch.cuda.synchronize()

    lines = calls(log)
    snap = events(lines[:after_attach])
    live = events(lines[after_attach:])
    if (0, dev, before.data_ptr(), 4000) not in snap:
        problems.append("the tensor made before the attach is not in the snapshot's events")
    if (0, dev, pa, 12345) not in live:
        problems.append("the 12345-byte tensor's allocation was not reported")
    if not any(e[0] == 1 and e[2] == pa for e in live):
        problems.append("its free was not reported")
    segs = sum(1 for e in snap + live if e[0] == 2)
    if segs == 0:
        problems.append("no segment event")
    if not out_ok:
        problems.append("the compiled output differs from eager")
    summary = "%s; %d snapshot events, %d live events (%d segment events); %s" % (
        mode, len(snap), len(live), segs, status[0][len("tensor_map_status 1 "):][:90])
    print("result %s %s" % ("fail" if problems else "pass", "; ".join(problems + [summary])))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
