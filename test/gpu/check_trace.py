#!/usr/bin/env python3
# File: test/gpu/check_trace.py
#
# What scripts/gpu-check.sh reads from a trace or a diff summary, read with
# a JSON parser (python3's json: on the GPU machine, unlike our Debian
# packages), never with grep. Only the standard library; runs without torch.
#
#   check_trace.py summary TRACE     KEY=VALUE lines, one pass over TRACE:
#       footer (yes|no), kernels, launches, dropped, unmeasured, every footer
#       counter as counter.NAME, and over the kernel records: kernel_records,
#       steps (distinct step numbers), gemm, aten,
#       triton, nccl, nccl_buffers (NCCL records with a buffer), bf16 (records
#       with a bf16 buffer), typed_gemm/typed_triton (records with a buffer
#       whose dtype is not raw), w8388608 (records with an 8388608-byte
#       buffer: a 2048x2048 bf16 weight), digests, digest_kernels, notes,
#       note_tensor_map (the first note about the tensor map), dump_notes
#       (notes about a tensor dump), note_dump (the first of them);
#       operator level: level (the header's capture.level), op_records,
#       op_buffers.cpu/.cuda (their buffers on that device) and
#       op_measured.cpu/.cuda (those of them whose stats have a hash and
#       count every element of the tensor's shape), digests_lost (the
#       digests' lost calls), note_op_unmeasured (the first note that
#       tensors were not measured);
#       footer_row "STATUS DETAIL" for the footer row (info with the
#       unmeasured count and every non-zero counter; fail without a footer
#       or when a context could not be prepared); provenance_eager and
#       provenance_compile "pass|fail DETAIL" (eager: kernels in every
#       phase, more than half with a scope; compile: every Triton kernel
#       carries an op).
#   check_trace.py find JSON KEY     the first value of KEY anywhere in the
#       JSON document (depth first), JSON-encoded; nothing when absent. A
#       dotted KEY (steps.first_kernel.a_name) is a path from the top.
#   check_trace.py strings JSON      every string value in the document, one
#       a line (to look for a word such as "suspect" in any note).
#
# A line that is not JSON (a trace cut short mid-line) is counted in
# bad_lines and skipped: a truncated trace still gives its complete records.
# Exit 0, or 2 with one line on stderr when a file cannot be read.
import collections
import json
import math
import re
import sys

GEMM = re.compile(r"gemm|cutlass|nvjet|sm90_xmma", re.I)
ATEN = re.compile(r"at::native|_ZN2at6native")
NCCL = re.compile(r"nccl", re.I)
# The footer counters of severity `error` (numtrace could not work in part
# of the process) in common/format/capture_counter_list.h, the one list:
# this runs where no numtrace header is, so it is copied here, and
# test/shim/engine/capture_counters_test.cc checks the copy against the list.
ERROR_COUNTERS = ("contexts_failed",)


def records(path):
    """(records, bad_lines) of a JSON-lines file."""
    out, bad = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(r, dict):
                out.append(r)
            else:
                bad += 1
    return out, bad


def footer_of(recs):
    footers = [r for r in recs if r.get("type") == "footer"]
    return footers[-1] if footers else None


def measured(b):
    """An op record's buffer whose stats cover the whole tensor: a hash, and
    `n` its shape's element count (bytes for raw)."""
    stats = b.get("stats") or {}
    shape = b.get("shape")
    want = b.get("bytes") if b.get("dtype") == "raw" or not isinstance(shape, list) else math.prod(shape)
    return "hash" in stats and stats.get("n") == want


def typed(k):
    return any(b.get("dtype") not in (None, "raw") for b in k.get("buffers") or [])


def summary(path):
    recs, bad = records(path)
    ks = [r for r in recs if r.get("type") == "kernel"]
    notes = [str(r.get("msg", "")) for r in recs if r.get("type") == "note"]
    digests = [r for r in recs if r.get("type") == "digest"]
    f = footer_of(recs)
    name = lambda k: str(k.get("name", ""))  # noqa: E731
    gemm = [k for k in ks if GEMM.search(name(k))]
    triton = [k for k in ks if "triton_" in name(k)]
    nccl = [k for k in ks if NCCL.search(name(k))]
    tmap = [n for n in notes if n.startswith("tensor map")]
    dump = [n for n in notes if "tensor dump" in n]
    unmeasured = [n for n in notes if n.startswith("operator level: tensors on")]
    header = next((r for r in recs if r.get("type") == "header"), {})
    ops = [k for k in ks if k.get("level") == "op"]
    op_buffers = [b for k in ops for b in k.get("buffers") or []]
    out = collections.OrderedDict()
    out["footer"] = "yes" if f else "no"
    out["bad_lines"] = bad
    for key in ("kernels", "launches", "dropped", "unmeasured"):
        out[key] = f.get(key, "?") if f else "?"
    for key, value in ((f or {}).get("counters") or {}).items():
        out["counter." + key] = value
    out["kernel_records"] = len(ks)
    out["steps"] = len({k.get("step") for k in ks if k.get("step") is not None})
    out["gemm"] = len(gemm)
    out["aten"] = sum(1 for k in ks if ATEN.search(name(k)))
    out["triton"] = len(triton)
    out["nccl"] = len(nccl)
    out["nccl_buffers"] = sum(1 for k in nccl if k.get("buffers"))
    out["bf16"] = sum(1 for k in ks if any(b.get("dtype") == "bf16" for b in k.get("buffers") or []))
    out["typed_gemm"] = sum(1 for k in gemm if typed(k))
    out["typed_triton"] = sum(1 for k in triton if typed(k))
    out["w8388608"] = sum(1 for k in ks if any(b.get("bytes") == 8388608 for b in k.get("buffers") or []))
    out["digests"] = len(digests)
    out["digest_kernels"] = sum(int(d.get("kernels") or 0) for d in digests)
    out["notes"] = len(notes)
    out["note_tensor_map"] = tmap[0] if tmap else ""
    out["dump_notes"] = len(dump)
    out["note_dump"] = dump[0] if dump else ""
    out["level"] = (header.get("capture") or {}).get("level", "kernels")
    out["op_records"] = len(ops)
    for dev in ("cpu", "cuda"):
        on = [b for b in op_buffers if str(b.get("device", "")).split(":")[0] == dev]
        out["op_buffers." + dev] = len(on)
        out["op_measured." + dev] = sum(1 for b in on if measured(b))
    out["digests_lost"] = sum(int(d.get("lost") or 0) for d in digests)
    out["note_op_unmeasured"] = unmeasured[0] if unmeasured else ""
    out["footer_row"] = footer_row(f)
    out["provenance_eager"] = provenance(ks, "eager")
    out["provenance_compile"] = provenance(ks, "compile")
    for key, value in out.items():
        # One line each: a value never carries a newline.
        print("%s=%s" % (key, str(value).replace("\n", " ")))
    return 0


def footer_row(f):
    if f is None:
        return "fail no footer (the run was cut short)"
    counters = f.get("counters") or {}
    nonzero = " ".join("%s=%s" % (k, v) for k, v in counters.items() if v)
    status = "fail" if any(counters.get(c) for c in ERROR_COUNTERS) else "info"
    return ("%s unmeasured=%s %s" % (status, f.get("unmeasured", "?"), nonzero)).rstrip()


def provenance(ks, mode):
    phases = collections.Counter(k.get("phase", "-") for k in ks)
    scoped = sum(1 for k in ks if "scope" in k)
    triton = [k for k in ks if "triton_" in str(k.get("name", ""))]
    triton_op = sum(1 for k in triton if "op" in k)
    ops = collections.Counter(k.get("op", "-") for k in ks).most_common(4)
    ok = bool(ks)
    if mode == "eager":
        ok = ok and all(phases[p] > 0 for p in ("forward", "backward", "optimizer")) and scoped * 2 > len(ks)
    else:
        ok = ok and bool(triton) and triton_op == len(triton)
    return "%s kernels %d, with scope %d%%, phases %s, Triton with op %d/%d, top ops %s" % (
        "pass" if ok else "fail", len(ks), 100 * scoped // max(1, len(ks)), dict(phases), triton_op, len(triton), ops)


def load(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return json.load(f)


def walk(doc):
    """Every node of doc, depth first, parents before children."""
    stack = [doc]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def find(path, key):
    if "." in key:
        node = load(path)
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return 0
            node = node[part]
        print(json.dumps(node))
        return 0
    for node in walk(load(path)):
        if isinstance(node, dict) and key in node:
            print(json.dumps(node[key]))
            return 0
    return 0


def strings(path):
    for node in walk(load(path)):
        if isinstance(node, str):
            print(node.replace("\n", " "))
    return 0


def main(argv):
    cmds = {"summary": (summary, 1), "find": (find, 2), "strings": (strings, 1)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) != 2 + cmds[argv[1]][1]:
        print("usage: check_trace.py summary TRACE | find JSON KEY | strings JSON",
              file=sys.stderr)
        return 2
    fn, _ = cmds[argv[1]]
    try:
        return fn(*argv[2:])
    except (OSError, ValueError) as e:
        print("check_trace.py: %s: %s" % (argv[2], e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
