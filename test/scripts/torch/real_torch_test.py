"""The PyTorch hooks (scripts/hooks/sitecustomize.py) against the real torch,
triton and numpy, on the CPU. Run by scripts/test-torch.sh with the venv's
python; each case runs in a fresh interpreter (the hooks load at start-up)
with a fake libnumtrace that logs its C API calls (test/scripts/fake).

Cases:
  * one numtrace_mark_step per optimizer.step() for SGD, Adam, AdamW in their
    for-loop, foreach and fused forms (a form the CPU build lacks is skipped
    with torch's own message);
  * the same under torch.compile of the whole training step;
  * an existing sitecustomize further down PYTHONPATH still runs;
  * a Triton kernel compiled for sm_90 on this GPU-less machine is announced
    with the dtypes of its pointer arguments, in kernel parameter order, as
    the real compiled kernel's signature gives them;
  * through the built `numtrace` command: `numtrace run` puts the hooks on a
    Python job's path by itself, and `numtrace doctor` sees them attach;
  * provenance (NUMTRACE_HOOKS_LOG) under `numtrace run --steps 2` with the
    real libnumtrace.so: nested module scopes in forward and backward, ATen
    ops, the optimizer phase, step 2 alone, the loss bitwise unchanged; the
    same for a torch.compile'd model with no recompile or graph break added;
    a hook that raises costs one stderr line and nothing else; non-ASCII
    module names;
  * operator level (`numtrace run --ops`, the real libnumtrace.so, no GPU):
    records of every ATen op with shape/device/pre, stdout unchanged, the
    same job twice identical, planted bugs (ops_model.py: a wrong constant,
    GELU approximation, causal mask, broadcasting in the loss, a model left
    in eval(), a bf16 matmul) each named at its operator and module with
    one root, the first NaN at its operator; activation checkpointing, a
    sub-tolerance change and a same-math refactor (mm + add for addmm)
    raise no divergence; under torch.compile the job is
    unchanged (losses, no graph break or graph added) and one line says
    compiled code is not captured;
  * scripts/gpu-check.sh part 3's operator-level rows from a bundle laid out
    here, on the CPU (NUMTRACE_CHECK_OPS_DEVICE=cpu): both pass; asked for
    cuda without CUDA, the row fails and says why;
  * the numerics gate: step 0 of ops_model.py against the golden
    test/data/ops_golden (docs/walkthroughs.md, 7) passes, a wrong constant fails;
  * environment: the settings torch reports (versions, TF32, determinism,
    cuDNN, SDPA) reach numtrace_set_environment once torch is imported, and a
    setting the script changes after the import is sent as the captured step
    saw it (not as it was at the import, nor as changed after the step);
  * tensor map: the allocator bridge built against the real torch headers
    maps real TraceEntry values to the expected numtrace_tensor_event calls;
    snapshot translation; in a job: built, loaded, attached and fed from the
    snapshot once, or exactly one status(0) naming why (no compiler, compile
    error), status(2) for cudaMallocAsync, nothing at all in a CPU job - the
    job's output and exit code unchanged. Events of real allocations need a
    GPU: not checked here.
  * DebugMode JSON logs (DebugMode.save_logs) made again by this torch with
    test/scripts/torch/make_debugmode_json.py: `numtrace diff` finds the same
    run identical, a planted constant at its op and module, and where a run
    with one more layer parts.
A case is skipped only where torch itself cannot do it here: where the same
code fails without the hooks too (a form the CPU build lacks, Inductor
without a working compiler); where only the run under the hooks fails, it
failed. Prints one line per case and a closing 'N passed, N failed, N skipped'.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

HOOKS = os.environ["NUMTRACE_TEST_HOOKS"]
NUMTRACE = os.environ["NUMTRACE_TEST_NUMTRACE_BIN"]
FAKE_LIB = os.environ["NUMTRACE_TEST_FAKE_LIB"]
results = {"passed": 0, "failed": 0, "skipped": 0}


# The cases run side by side (CASES, main): one lock keeps the tally and the
# lines whole.
report_lock = threading.Lock()


def report(name, status, detail=""):
    with report_lock:
        results[status] += 1
        print(f"{status.upper():7} {name}" + (f": {detail}" if detail else ""), flush=True)


def run_python(code, extra_path=(), timeout=900, env_extra=None, hooks=True):
    """Runs `code` in a fresh interpreter under the hooks (or without); returns (proc, log lines)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "calls.log")
        env = dict(os.environ)
        env.update(FAKE_NUMTRACE_LOG=log, NUMTRACE_LIB_PATH=FAKE_LIB,
                   PYTHONPATH=os.pathsep.join([HOOKS, *extra_path] if hooks else extra_path),
                   TRITON_CACHE_DIR=os.path.join(tmp, "triton-cache"),
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor-cache"))
        env.update(env_extra or {})
        # A file, not -c: @triton.jit reads its function's source.
        script = os.path.join(tmp, "case.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(code))
        proc = subprocess.run([sys.executable, script], env=env,
                              capture_output=True, text=True, timeout=timeout)
        lines = open(log).read().splitlines() if os.path.exists(log) else []
    return proc, lines


def step_marks(lines):
    """Step marks in a fake-library log: plain, or numbered by the optimizer's count."""
    return sum(1 for line in lines if line == "mark_step " or line.startswith("mark_step_to "))


def last_json(proc):
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return None


def skipped_or_failed(name, hooked_why, plain_why):
    """A case that did not run through: skipped only when torch itself cannot
    do it here (the same code without the hooks failed too), failed when only
    the run under the hooks did. *_why: None where that run worked. Returns
    whether it was reported."""
    if hooked_why is None and plain_why is None:
        return False
    if plain_why is not None:
        report(name, "skipped", "torch cannot do this here, without the hooks too: " + plain_why[-300:])
    else:
        report(name, "failed", "only under the hooks (without them it runs): " + hooked_why[-400:])
    return True


OPTIMIZER_CASES = """
import json, os, torch
steps = 3
log = os.environ["FAKE_NUMTRACE_LOG"]
def marks():
    return sum(1 for l in open(log)) if os.path.exists(log) else 0
out = {}
for name, cls, kw in [("SGD for-loop", torch.optim.SGD, dict(foreach=False)),
                      ("SGD foreach", torch.optim.SGD, dict(foreach=True)),
                      ("SGD fused", torch.optim.SGD, dict(fused=True)),
                      ("Adam for-loop", torch.optim.Adam, dict(foreach=False)),
                      ("Adam foreach", torch.optim.Adam, dict(foreach=True)),
                      ("Adam fused", torch.optim.Adam, dict(fused=True)),
                      ("AdamW foreach", torch.optim.AdamW, dict(foreach=True)),
                      ("AdamW fused", torch.optim.AdamW, dict(fused=True))]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    before = marks()
    try:
        opt = cls(model.parameters(), lr=0.01, **kw)
        for _ in range(steps):
            model(torch.randn(5, 8)).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
    except (RuntimeError, ValueError) as e:
        out[name] = "skip: " + str(e).splitlines()[0][:150]
        continue
    out[name] = marks() - before
print(json.dumps(out))
"""

COMPILED_STEP = """
import json, os, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
opt = torch.optim.AdamW(model.parameters(), lr=0.01, foreach=True)
@torch.compile
def train_step(x):
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss
losses = []
try:
    for _ in range(3):
        losses.append(train_step(torch.randn(5, 8)).item().hex())
except Exception as e:
    print(json.dumps({"error": type(e).__name__ + ": " + str(e).splitlines()[0][:200]}))
    raise SystemExit(0)
from torch._dynamo.utils import counters
print(json.dumps({"ok": True, "losses": losses, "recompiles": sum(counters["recompiles"].values()),
                  "graph_breaks": sum(counters["graph_break"].values()),
                  "unique_graphs": counters["stats"]["unique_graphs"]}))
"""

CHAINED = """
import torch
opt = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
opt.step()
"""

TRITON_SM90 = """
import json
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (x * scale + y).to(tl.float16), mask=mask)

signature = {"x_ptr": "*bf16", "y_ptr": "*fp32", "out_ptr": "*fp16", "n": "i32", "scale": "fp32",
             "BLOCK": "constexpr"}
src = ASTSource(fn=scaled_add, signature=signature, constexprs={"BLOCK": 128})
kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32))
ptx = kernel.asm["ptx"]
entry = ptx[ptx.index(".entry"):]
params = entry[:entry.index(")")].count(".param")
print(json.dumps({"name": kernel.name, "arch": kernel.metadata.target.arch, "ptx_params": params,
                  "signature": {k: str(v) for k, v in kernel.src.signature.items()},
                  "has_cubin": len(kernel.asm.get("cubin", b"")) > 0}))
"""


def test_optimizers():
    proc, _ = run_python(OPTIMIZER_CASES)
    got = last_json(proc)
    if got is None:
        report("optimizer step marks", "failed", proc.stderr.strip()[-400:])
        return
    # A form that raised under the hooks is skipped only if it raises without them.
    plain = {}
    if any(isinstance(v, str) for v in got.values()):
        plain = last_json(run_python(OPTIMIZER_CASES, hooks=False)[0]) or {}
    for name, value in got.items():
        if isinstance(value, str):
            skipped_or_failed(f"one step mark per {name} step", value,
                              plain.get(name) if isinstance(plain.get(name), str) else None)
        elif value == 3:
            report(f"one step mark per {name} step", "passed")
        else:
            report(f"one step mark per {name} step", "failed", f"3 steps gave {value} marks")


def test_compiled_step():
    proc, lines = run_python(COMPILED_STEP)
    got = last_json(proc)
    if got is None:
        report("torch.compile training step", "failed", proc.stderr.strip()[-400:])
    elif "error" in got:
        # Inductor on the CPU needs a working C++ compiler and Python headers:
        # whether it has them here, the run without the hooks tells.
        plain = last_json(run_python(COMPILED_STEP, hooks=False)[0])
        skipped_or_failed("one step mark per step under torch.compile", got["error"],
                          "no result" if plain is None else plain.get("error"))
    else:
        marks = step_marks(lines)
        report("one step mark per step under torch.compile", "passed" if marks == 3 else "failed",
               "" if marks == 3 else f"3 compiled steps gave {marks} marks")
        # The first mark reads AdamW's step count: the compiled job is as it
        # is without the hooks (losses, recompiles, graph breaks, graphs).
        plain = last_json(run_python(COMPILED_STEP, hooks=False)[0])
        ok = plain is not None and got == plain and lines[:1] == ["mark_step_to 1"]
        report("the optimizer's step count read under torch.compile leaves the job unchanged",
               "passed" if ok else "failed", "" if ok else f"hooks {got} {lines[:1]}, without {plain}")


RESUMED = """
import json, os, torch
torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
opt = (torch.optim.Adam if os.environ["CASE_OPT"] == "adam" else torch.optim.SGD)(
    model.parameters(), lr=0.01, foreach=False)
ckpt, first = os.environ["CASE_CKPT"], 0
if os.path.exists(ckpt):  # resume: the model, the optimizer and the step count saved after step 2
    saved = torch.load(ckpt)
    model.load_state_dict(saved["model"])
    opt.load_state_dict(saved["opt"])
    first = saved["steps"]
losses = []
for step in range(first, 6):
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(step))
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item().hex())
    if step == 2 and first == 0:
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "steps": 3}, ckpt)
print(json.dumps({"losses": losses, "state": len(opt.state)}))
"""


def test_resumed_step_numbers():
    """A job resumed from a checkpoint: the step marks carry the optimizer's
    count (Adam keeps one, SGD none), the job's losses and state unchanged."""
    for kind, want in (("adam", ["mark_step_to 4", "mark_step ", "mark_step "]),
                       ("sgd", ["mark_step ", "mark_step ", "mark_step "])):
        name = f"a {kind} job resumed at step 3 numbers its steps from 3"
        with tempfile.TemporaryDirectory() as tmp:
            env = {"CASE_OPT": kind, "CASE_CKPT": os.path.join(tmp, "ckpt.pt")}
            whole = last_json(run_python(RESUMED, env_extra=env, hooks=False)[0])  # saves the checkpoint
            plain = last_json(run_python(RESUMED, env_extra=env, hooks=False)[0])
            hooks_log = os.path.join(tmp, "hooks.log")
            proc, lines = run_python(RESUMED, env_extra=dict(env, NUMTRACE_HOOKS_LOG=hooks_log,
                                                             FAKE_NUMTRACE_CAPTURED="4"))
            got = last_json(proc)
            logged = events_of(open(hooks_log).read().splitlines()) if os.path.exists(hooks_log) else []
        marks = [line for line in lines if line.startswith("mark_step")]
        steps = sorted({line.split()[0] for line in logged})
        problems = []
        if got is None or whole is None or plain is None:
            problems.append("no result: " + proc.stderr.strip()[-300:])
        else:
            if got != plain or got["losses"] != whole["losses"][3:]:
                problems.append(f"the job changed: {got} without the hooks {plain}, whole run {whole}")
            if marks != want:
                problems.append(f"marks {marks}, expected {want}")
            # Provenance numbers its steps as the shim does: only the captured step 4 is announced.
            if kind == "adam" and steps != ["step=4"]:
                problems.append(f"the hooks log announced {steps}, expected only step=4")
        report(name, "failed" if problems else "passed", "; ".join(problems))


def test_chained_sitecustomize():
    with tempfile.TemporaryDirectory() as other:
        marker = os.path.join(other, "ran")
        with open(os.path.join(other, "sitecustomize.py"), "w") as f:
            f.write(f"open({marker!r}, 'w').write('yes')\n")
        proc, lines = run_python(CHAINED, extra_path=[other])
        ok = proc.returncode == 0 and os.path.exists(marker) and step_marks(lines) == 1
        report("an existing sitecustomize still runs, hooks too", "passed" if ok else "failed",
               "" if ok else f"rc={proc.returncode} marker={os.path.exists(marker)} log={lines} "
               f"{proc.stderr.strip()[-300:]}")


BENCH_PAUSE = """
import ctypes, inspect, json, os
import torch
import torch._inductor.utils as inductor_utils
import triton.testing
from torch._inductor.runtime.benchmarking import benchmarker
lib = ctypes.CDLL(os.environ["NUMTRACE_LIB_PATH"])
depths = set()
def fn():
    depths.add(lib.fake_pause_depth())
benchmarker.benchmark(fn, device="cpu")  # Inductor's benchmarker, as its autotuning calls it
print(json.dumps({
    "depths": sorted(depths), "after": lib.fake_pause_depth(),
    "do_bench": getattr(triton.testing.do_bench, "_numtrace_paused", False),
    "do_bench_warmup": "warmup" in inspect.signature(triton.testing.do_bench).parameters,
    "do_bench_cudagraph": getattr(triton.testing.do_bench_cudagraph, "_numtrace_paused", False),
    "profiling": getattr(inductor_utils.do_bench_using_profiling, "_numtrace_paused", False)}))
"""


def test_bench_pause():
    """Review finding 7: Inductor's and Triton's benchmarking run with numtrace's
    measurement paused (the benchmarked function sees depth > 0), and resumed
    after; without the hooks the depth stays 0 (the check can fail)."""
    name = "benchmarks run with measurement paused"
    proc, lines = run_python(BENCH_PAUSE)
    plain, _ = run_python(BENCH_PAUSE, hooks=False)
    got, base = last_json(proc), last_json(plain)
    if skipped_or_failed(name, None if got else proc.stderr[-400:], None if base else plain.stderr[-400:]):
        return
    ok = (0 not in got["depths"] and got["after"] == 0 and lines.count("pause ") == lines.count("resume ") > 0
          and got["do_bench"] and got["do_bench_warmup"] and got["do_bench_cudagraph"] and got["profiling"]
          and base["depths"] == [0])
    report(name, "passed" if ok else "failed", "" if ok else f"hooked {got} plain {base} log {lines[:6]}")


def test_triton_dtypes():
    proc, lines = run_python(TRITON_SM90)
    got = last_json(proc)
    if got is None:
        report("Triton sm_90 kernel dtypes", "failed", proc.stderr.strip()[-600:])
        return
    annotations = [l.split(" ", 2) for l in lines if l.startswith("annotate ")]
    if got["arch"] != 90 or not got["has_cubin"]:
        report("Triton kernel compiled for sm_90 without a GPU", "failed", json.dumps(got))
        return
    report("Triton kernel compiled for sm_90 without a GPU", "passed")
    # What the engine expects: one dtype per kernel parameter, in order;
    # pointers by their element type, scalars raw, constexprs compiled away.
    expected = "bf16,f32,f16,raw,raw"
    mine = [a for a in annotations if a[1] == got["name"]]
    if len(mine) != 1:
        report("Triton kernel annotated with its dtypes", "failed", f"annotations: {annotations}")
        return
    dtypes = mine[0][2].split(",")
    ok = mine[0][2] == expected
    report("Triton kernel annotated with its dtypes", "passed" if ok else "failed",
           "" if ok else f"got {mine[0][2]}, expected {expected} from {got['signature']}")
    # The compiled kernel may take hidden trailing parameters (Triton's scratch
    # pointers); the announced dtypes must cover the leading user parameters.
    ok = len(dtypes) <= got["ptx_params"]
    report("announced dtypes fit the compiled kernel's parameters", "passed" if ok else "failed",
           f"{len(dtypes)} dtypes, {got['ptx_params']} PTX parameters")


def test_triton_inductor_ops():
    # A Triton kernel named as Inductor names its fused kernels: the hook
    # announces the ATen ops of the name (multi-part op names resolved
    # against torch.ops.aten).
    for kernel, want in (("triton_poi_fused_addmm_relu_0", "aten::addmm+aten::relu"),
                         ("triton_red_fused__log_softmax_1", "aten::_log_softmax")):
        # As under Inductor, torch is imported (its op table resolves names).
        proc, lines = run_python("import torch\n" + TRITON_SM90.replace("scaled_add", kernel))
        ops = [l.split(" ", 2) for l in lines if l.startswith("ops ")]
        ok = [kernel, want] in [o[1:] for o in ops]
        report(f"Triton kernel {kernel} announced with ops {want}", "passed" if ok else "failed",
               "" if ok else f"ops lines {ops} {proc.stderr.strip()[-300:]}")


def test_numtrace_command():
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "calls.log")
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write("import torch\n"
                    "opt = torch.optim.Adam(torch.nn.Linear(4, 4).parameters(), foreach=True)\n"
                    "for _ in range(3):\n    opt.step()\n"
                    "raise SystemExit(3)\n")
        env = dict(os.environ, NUMTRACE_LIB=FAKE_LIB, FAKE_NUMTRACE_LOG=log)
        env.pop("PYTHONPATH", None)
        proc = subprocess.run([NUMTRACE, "run", "-o", os.path.join(tmp, "run"), "--", sys.executable, script],
                              env=env, capture_output=True, text=True, timeout=300)
        marks = step_marks(open(log).read().splitlines()) if os.path.exists(log) else 0
        ok = proc.returncode == 3 and marks == 3
        report("numtrace run: hooks on a Python job's path, exit status passed through",
               "passed" if ok else "failed",
               "" if ok else f"rc={proc.returncode} marks={marks} {proc.stderr.strip()[-300:]}")
        env = dict(os.environ, NUMTRACE_PYTHON=sys.executable)
        proc = subprocess.run([NUMTRACE, "doctor", "-o", tmp], env=env, capture_output=True, text=True,
                              timeout=300)
        row = [l for l in proc.stdout.splitlines() if l.startswith("PyTorch hooks attach")]
        ok = bool(row) and " ok " in row[0] and "Triton dtype hook" in row[0]
        report("numtrace doctor: the hooks attach to this torch and triton", "passed" if ok else "failed",
               "" if ok else proc.stdout[-500:])


NESTED = """
import json, os, sys, torch, torch.nn as nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()
    def forward(self, x):
        return self.act(self.fc(x))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])
        self.extra = nn.ModuleDict({NAME: nn.Linear(8, 8)})
        self.head = nn.Linear(8, 2)
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(self.extra[NAME](x))
    BROKEN
torch.manual_seed(0)
model = Net()
fn = torch.compile(model) if COMPILE else model
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(4):
    loss = fn(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item().hex())
out = {"losses": losses}
if COMPILE:
    from torch._dynamo.utils import counters
    out["graph_breaks"] = sum(counters["graph_break"].values())
    out["frames_ok"] = counters["frames"]["ok"]
    out["unique_graphs"] = counters["stats"]["unique_graphs"]
    out["recompiles"] = sum(counters["recompiles"].values())
print(json.dumps(out))
"""


def run_nested(tmp, hooks, compile_=False, name="mlp_é", broken=False, log=None):
    """The nested model trained 4 steps under `numtrace run --steps 2` (hooks on or off)."""
    script = os.path.join(tmp, "nested.py")
    code = NESTED.replace("NAME", repr(name)).replace("COMPILE", repr(compile_))
    # A model whose named_modules() raises: the hook that names modules fails.
    # (only for the call the hooks make, so the job itself still works).
    code = code.replace("    BROKEN", "    def named_modules(self, memo=None, prefix='', remove_duplicate=True):\n"
                        "        if not remove_duplicate:\n            raise RuntimeError('planted')\n"
                        "        return super().named_modules(memo, prefix, remove_duplicate)"
                        if broken else "")
    with open(script, "w") as f:
        f.write(code)
    log = log or os.path.join(tmp, "hooks.log")
    if os.path.isfile(log):
        os.remove(log)
    env = dict(os.environ, NUMTRACE_HOOKS_LOG=log, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"))
    for k in ("PYTHONPATH", "NUMTRACE_LIB", "NUMTRACE_LIB_PATH"):
        env.pop(k, None)
    run_dir = os.path.join(tmp, "run-%d" % len(os.listdir(tmp)))
    cmd = [NUMTRACE, "run", "-o", run_dir, "--steps", "2"] + ([] if hooks else ["--no-torch-hooks"]) + \
          ["--", sys.executable, script]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    lines = open(log, encoding="utf-8").read().splitlines() if os.path.isfile(log) else []
    return proc, last_json(proc), events_of(lines)


def events_of(lines):
    """The hooks log's event lines, without its '# run ...' lines (which run and process)."""
    return [line for line in lines if not line.startswith("# ")]


def fields(line):
    return dict(p.split("=", 1) for p in line.split() if "=" in p)


def test_provenance_log():
    with tempfile.TemporaryDirectory() as tmp:
        proc, got, lines = run_nested(tmp, hooks=True)
        plain, want, _ = run_nested(tmp, hooks=False)
        name = "provenance log under numtrace run --steps 2"
        if got is None or want is None:
            report(name, "failed", f"rc={proc.returncode} {proc.stderr.strip()[-400:]} | {plain.stderr.strip()[-200:]}")
            return
        events = [fields(l) for l in lines]
        steps = {e.get("step") for e in events}
        fwd = {e["scope"] for e in events if e.get("phase") == "forward"}
        bwd = {e["scope"] for e in events if e.get("phase") == "backward"}
        ops = {e["op"] for e in events}
        checks = {
            "events of step 2 only": steps == {"2"},
            "nested modules in forward": {"layers.0.fc", "layers.1.fc", "layers.1.act", "head"} <= fwd,
            "nested modules in backward": {"layers.0.fc", "layers.1.fc", "head"} <= bwd,
            "ATen ops mm and addmm": {"aten::addmm", "aten::mm"} <= ops,
            "source line of a forward op": any(e.get("op") == "aten::addmm" and
                                               e.get("src", "").startswith("nested.py:") for e in events),
            "optimizer phase": any(e.get("phase") == "optimizer" for e in events),
            "non-ASCII module name": "extra.mlp_é" in fwd,
            "loss bitwise unchanged": got["losses"] == want["losses"],
            "stderr quiet": "numtrace hooks" not in proc.stderr,
        }
        for what, ok in checks.items():
            report(f"{name}: {what}", "passed" if ok else "failed",
                   "" if ok else f"{len(lines)} lines: {lines[:12]} ... stderr {proc.stderr.strip()[-300:]}")


def test_provenance_compiled():
    with tempfile.TemporaryDirectory() as tmp:
        proc, got, lines = run_nested(tmp, hooks=True, compile_=True)
        plain, want, _ = run_nested(tmp, hooks=False, compile_=True)
        name = "provenance under torch.compile"
        if got is None or want is None:
            skipped_or_failed(name, None if got is not None else f"rc={proc.returncode} {proc.stderr.strip()}",
                              None if want is not None else f"rc={plain.returncode} {plain.stderr.strip()}")
            return
        ok = got["losses"] == want["losses"]
        report(f"{name}: loss bitwise unchanged", "passed" if ok else "failed", "" if ok else f"{got} vs {want}")
        # Dynamo compiles the hook functions' own frames (called by the inner
        # module's _call_impl) into empty graphs: frames_ok grows, the model's
        # graphs do not.
        ok = (got["graph_breaks"], got["recompiles"], got["unique_graphs"]) == \
             (want["graph_breaks"], want["recompiles"], want["unique_graphs"])
        report(f"{name}: no graph break, recompile or graph added", "passed" if ok else "failed",
               f"hooks {dict(got, losses='...')}, none {dict(want, losses='...')}")
        steps = {fields(l).get("step") for l in lines}
        ok = steps <= {"2"}
        report(f"{name}: events of step 2 only", "passed" if ok else "failed", f"{len(lines)} lines, steps {steps}")


def test_provenance_hook_raises():
    with tempfile.TemporaryDirectory() as tmp:
        proc, got, lines = run_nested(tmp, hooks=True, broken=True)
        plain, want, _ = run_nested(tmp, hooks=False, broken=True)
        said = [l for l in proc.stderr.splitlines() if l.startswith("numtrace hooks:")]
        ok = (got is not None and want is not None and got["losses"] == want["losses"]
              and proc.returncode == plain.returncode == 0 and len(said) == 1 and "planted" in said[0])
        report("a provenance hook that raises: one stderr line, the job unchanged", "passed" if ok else "failed",
               "" if ok else f"rc={proc.returncode}/{plain.returncode} said={said} {proc.stderr.strip()[-300:]}")
        ok = any(fields(l).get("phase") == "optimizer" for l in lines)
        report("a provenance hook that raises: the rest of the capture goes on", "passed" if ok else "failed",
               f"{len(lines)} lines")


CHECKPOINTED = """
import torch, torch.nn as nn
from torch.utils.checkpoint import checkpoint
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return torch.relu(self.fc(x))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])
    def forward(self, x):
        for layer in self.layers:
            x = checkpoint(layer, x, use_reentrant=False)
        return x
torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(4, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
"""


def test_hooks_log_not_a_file():
    # A fifo nobody reads, a directory: `numtrace run` refuses it before the job
    # (one line, exit 2, like every other output). The hooks' own handling of
    # such a log (the shim used without `numtrace run`) is not exercised here.
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        _, want, _ = run_nested(tmp, hooks=False)
        for what, path in (("a fifo", fifo), ("a directory", tmp)):
            proc, got, _ = run_nested(tmp, hooks=True, log=path)
            said = [l for l in proc.stderr.splitlines() if l.strip()]
            ok = proc.returncode == 2 and got is None and len(said) == 1 and "--hooks-log" in said[0]
            report(f"--hooks-log naming {what}: refused before the job in one line",
                   "passed" if ok else "failed", "" if ok else f"rc={proc.returncode} {proc.stderr.strip()[-300:]}")


TWICE_JOB = """
import subprocess, sys, torch
m = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(3):
    m(torch.randn(2, 4)).sum().backward()
    opt.step()
    opt.zero_grad()
sys.exit(subprocess.call([SIM, "--steps", "4", "--nondeterministic"], stdout=subprocess.DEVNULL))
"""


def test_hooks_log_names_each_run():
    """`numtrace twice --watch --hooks-log F` appends four runs to F (run1, run2, the
    step captures): each run's lines follow a '# run pid= label= output=' line."""
    with tempfile.TemporaryDirectory() as tmp:
        log, script = os.path.join(tmp, "hooks.log"), os.path.join(tmp, "job.py")
        with open(script, "w") as f:
            f.write(TWICE_JOB.replace("SIM", repr(os.path.join(os.path.dirname(NUMTRACE), "numtrace-sim"))))
        env = dict(os.environ)
        for k in ("PYTHONPATH", "NUMTRACE_LIB", "NUMTRACE_LIB_PATH"):
            env.pop(k, None)
        hunt = os.path.join(tmp, "hunt")
        proc = subprocess.run([NUMTRACE, "twice", "-o", hunt, "--watch", "--hooks-log", log, "--",
                               sys.executable, script], env=env, capture_output=True, text=True, timeout=900)
        lines = open(log).read().splitlines() if os.path.exists(log) else []
    runs = [fields(l) for l in lines if l.startswith("# run ")]
    outputs = [r.get("output") for r in runs]
    problems = []
    if proc.returncode not in (0, 1):
        problems.append(f"twice exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    if not lines or not lines[0].startswith("# run "):
        problems.append(f"the log does not start with a run line: {lines[:2]}")
    # Every run that logged events says which it was, with its own pid and output.
    if len(set(outputs)) != len(outputs) or not all(o and o.startswith(hunt) for o in outputs):
        problems.append(f"run lines {runs}")
    if len({r.get("pid") for r in runs}) != len(runs):
        problems.append(f"pids repeat: {runs}")
    if not any(o.endswith("-run1") for o in outputs if o) or not any(o.endswith("-run2") for o in outputs if o):
        problems.append(f"the step captures are not told apart: {outputs}")
    report("twice --hooks-log: each run's events follow a line naming its run and pid",
           "failed" if problems else "passed", "; ".join(problems))


def test_provenance_checkpointing():
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "hooks.log")
        script = os.path.join(tmp, "ckpt.py")
        with open(script, "w") as f:
            f.write(CHECKPOINTED)
        env = dict(os.environ, NUMTRACE_HOOKS_LOG=log)
        for k in ("PYTHONPATH", "NUMTRACE_LIB", "NUMTRACE_LIB_PATH"):
            env.pop(k, None)
        proc = subprocess.run([NUMTRACE, "run", "-o", os.path.join(tmp, "run"), "--steps", "2", "--",
                               sys.executable, script], env=env, capture_output=True, text=True, timeout=600)
        lines = events_of(open(log).read().splitlines()) if os.path.exists(log) else []
        recompute = {fields(l)["scope"] for l in lines if l.endswith(" recompute")}
        ok = proc.returncode == 0 and {"layers.0.fc", "layers.1.fc"} <= recompute and \
            all(fields(l)["phase"] == "backward" for l in lines if l.endswith(" recompute"))
        report("activation checkpointing: recompute logged in backward under the full module names",
               "passed" if ok else "failed", "" if ok else f"recompute scopes {recompute} {proc.stderr[-300:]}")


# ---- tensor map (scripts/hooks/numtrace_tensor_map.py, numtrace_alloc_bridge.cc) ----

def tensor_map_module(hooks=HOOKS):
    """The hooks' tensor map module, loaded from the hooks folder as sitecustomize loads it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("numtrace_tensor_map",
                                                  os.path.join(hooks, "numtrace_tensor_map.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tensor_map_bridge():
    import ctypes
    import time
    import torch
    tm = tensor_map_module()
    name = "tensor map bridge built against the real torch headers"
    env = {k: v for k, v in os.environ.items() if k != "CXX"}  # the PATH search: c++, g++, clang++
    start = time.monotonic()
    try:
        bridge = tm.build_bridge(torch, defines=["NUMTRACE_BRIDGE_TEST"], environ=env)
    except tm.BridgeError as e:
        report(name, "failed", str(e))
        return
    report(name, "passed", "torch %s, %.1f s" % (torch.__version__, time.monotonic() - start))
    calls = []
    EventFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_ulonglong)
    callback = EventFn(lambda *a: calls.append(a) or 1)
    feed = bridge.numtrace_bridge_test_feed
    feed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_ulonglong]
    # Real TraceEntry values, each with its own address (above 4 GiB: all 64 bits pass).
    base = 0x7F3A_0000_0000
    fed = ["ALLOC", "FREE_REQUESTED", "FREE_COMPLETED", "SEGMENT_ALLOC", "SEGMENT_FREE", "SEGMENT_MAP",
           "SEGMENT_UNMAP", "SNAPSHOT", "OOM", "ANNOTATE"]
    for i, action in enumerate(fed):
        if feed(ctypes.cast(callback, ctypes.c_void_p), action.encode(), 3, base + i * 0x1000, 1000 + i) != 0:
            report("tensor map bridge: TraceEntry %s built" % action, "failed", "not an action of this torch")
            return
    expected = [(0, 3, base, 1000),                    # ALLOC: the requested size
                (1, 3, base + 0x2000, 1002),           # FREE_COMPLETED (FREE_REQUESTED skipped)
                (2, 3, base + 0x3000, 1003),           # SEGMENT_ALLOC
                (3, 3, base + 0x4000, 1004),           # SEGMENT_FREE
                (2, 3, base + 0x5000, 1005),           # SEGMENT_MAP
                (3, 3, base + 0x6000, 1006)]           # SEGMENT_UNMAP; SNAPSHOT, OOM, ANNOTATE skipped
    ok = calls == expected
    report("tensor map bridge: real TraceEntry values give the expected event calls", "passed" if ok else "failed",
           "" if ok else f"got {calls}, expected {expected}")
    line = tm.build_check(torch)
    ok = line.startswith("ok: built against torch %s in " % torch.__version__)
    report("tensor map bridge: the doctor's build check", "passed" if ok else "failed", line)
    try:
        tm.attach(bridge, None)
        report("tensor map bridge: no event function refused", "failed", "attach(None) succeeded")
    except tm.BridgeError as e:
        ok = "no numtrace_tensor_event function" in str(e)
        report("tensor map bridge: no event function refused", "passed" if ok else "failed", str(e))


def test_tensor_map_snapshot():
    tm = tensor_map_module()
    snapshot = {"segments": [
        {"device": 1, "address": 0x10000, "total_size": 0x4000, "blocks": [
            {"size": 0x1000, "requested_size": 4000, "state": "active_allocated"},     # no address: running sum
            {"size": 0x1000, "requested_size": 16, "state": "inactive"},
            {"size": 0x2000, "requested_size": 8000, "state": "active_pending_free"}]},
        {"address": 0x90000, "total_size": 0x200000, "blocks": [                          # no device: the current
            {"address": 0x90000, "size": 0x800, "requested_size": 2000, "state": "active_allocated"},
            {"address": 0x90800, "size": 0x800, "requested_size": 1, "state": "inactive"},
            {"address": 0x91000, "size": 0x1000, "requested_size": 3, "state": "active_awaiting_free"}]},
        {"device": 0, "address": 0xA0000, "total_size": 0x1000, "blocks": []}]}
    expected = [(2, 1, 0x10000, 0x4000), (0, 1, 0x10000, 4000), (0, 1, 0x12000, 8000),
                (2, 5, 0x90000, 0x200000), (0, 5, 0x90000, 2000), (0, 5, 0x91000, 3),
                (2, 0, 0xA0000, 0x1000)]
    got = tm.snapshot_events(snapshot, default_device=5)
    ok = got == expected
    report("tensor map: snapshot segments and live blocks translated", "passed" if ok else "failed",
           "" if ok else f"got {got}, expected {expected}")
    ok = tm.snapshot_events({"segments": []}) == [] and tm.snapshot_events({}) == []
    report("tensor map: an empty snapshot gives no events", "passed" if ok else "failed")
    # The line a failed build is reported with: the compiler's first error,
    # the linker's complaint rather than collect2's summary.
    for output, want in [
            ("In file included from x.cc:19:\n/t/include/c10/cuda/CUDAStream.h:3:10: fatal error: "
             "cuda_runtime_api.h: No such file or directory\ncompilation terminated.\n",
             "/t/include/c10/cuda/CUDAStream.h:3:10: fatal error: cuda_runtime_api.h: No such file or directory"),
            ("/usr/bin/ld: cannot find -lc10_cuda: No such file or directory\n"
             "collect2: error: ld returned 1 exit status\n",
             "/usr/bin/ld: cannot find -lc10_cuda: No such file or directory"),
            ("", "no output")]:
        got = tm.first_error(output)
        report(f"tensor map: compiler output reported as {want[:40]!r}...", "passed" if got == want else "failed",
               "" if got == want else f"got {got!r}")
    # A partial install without the bridge's source: said so, no compiler run.
    import shutil
    import torch
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(HOOKS, "numtrace_tensor_map.py"), tmp)
        partial = tensor_map_module(tmp)
        try:
            partial.build_bridge(torch)
            report("tensor map: a missing bridge source is named", "failed", "built")
        except partial.BridgeError as e:
            ok = "numtrace_alloc_bridge.cc is missing" in str(e)
            report("tensor map: a missing bridge source is named", "passed" if ok else "failed", str(e))


# A CPU job that looks like a CUDA job to the hooks: torch.cuda.is_initialized()
# is the only thing set (plus what each case names); the bridge is really
# built, loaded and attached (to the CPU process's allocator, which has no
# device yet, so it never calls back: events of real allocations need a GPU).
TM_PRETEND_CUDA = """
import torch
torch.cuda.is_initialized = lambda: True
"""
TM_SNAPSHOT = """
torch.cuda.current_device = lambda: 0
torch.cuda.memory._snapshot = lambda: {"segments": [{"device": 0, "address": 4096, "total_size": 2097152,
    "blocks": [{"size": 512, "requested_size": 500, "state": "active_allocated"},
               {"size": 512, "requested_size": 4, "state": "inactive"}]}]}
"""
TM_JOB = """
import sys, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 4)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print("loss", loss.item().hex())
sys.stderr.write("job stderr\\n")
sys.exit(5)
"""
# No module forward before the first step: the attach comes from the step hook.
TM_JOB_NO_FORWARD = """
import sys, torch
p = torch.nn.Parameter(torch.ones(3))
opt = torch.optim.SGD([p], lr=0.5)
for _ in range(2):
    p.grad = torch.ones(3)
    opt.step()
print("p", p.tolist())
sys.exit(5)
"""


def recording_compiler(tmp, body='exec g++ "$@"', name="cxx"):
    """A CXX that records each run (and whether LD_PRELOAD / CUDA_INJECTION64_PATH reached it)."""
    path = os.path.join(tmp, name)
    mark = os.path.join(tmp, name + "-ran")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho \"ran LD_PRELOAD=${LD_PRELOAD-unset} "
                "CUDA_INJECTION64_PATH=${CUDA_INJECTION64_PATH-unset}\" >>%s\n%s\n" % (mark, body))
    os.chmod(path, 0o755)
    return path, mark


def tm_lines(lines):
    return [l for l in lines if l.startswith("tensor_")]


def same_job(proc, plain):
    return (proc.returncode, proc.stdout, proc.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_tensor_map_cpu_job():
    """CUDA never initialized: no wanted() call, no status, no build, the job unchanged."""
    with tempfile.TemporaryDirectory() as tmp:
        cxx, mark = recording_compiler(tmp)
        env = {"CXX": cxx, "FAKE_NUMTRACE_TENSOR_MAP": "1"}
        proc, lines = run_python(TM_JOB, env_extra=env)
        plain, _ = run_python(TM_JOB, env_extra=env, hooks=False)
        ok = tm_lines(lines) == [] and not os.path.exists(mark) and same_job(proc, plain) and \
            step_marks(lines) == 3
        report("tensor map in a CPU job: no attach attempt, no status, no build, the job unchanged",
               "passed" if ok else "failed",
               "" if ok else f"calls {tm_lines(lines)} built={os.path.exists(mark)} rc={proc.returncode}/"
               f"{plain.returncode} stderr {proc.stderr.strip()[-300:]}")


def test_tensor_map_attached():
    with tempfile.TemporaryDirectory() as tmp:
        cxx, mark = recording_compiler(tmp)
        tmpdir = os.path.join(tmp, "tmpdir")
        os.mkdir(tmpdir)
        env = {"CXX": cxx, "FAKE_NUMTRACE_TENSOR_MAP": "1", "TMPDIR": tmpdir,
               "LD_PRELOAD": FAKE_LIB, "CUDA_INJECTION64_PATH": "/nonexistent/libnumtrace.so"}
        proc, lines = run_python(TM_PRETEND_CUDA + TM_SNAPSHOT + TM_JOB, env_extra=env)
        plain, _ = run_python(TM_PRETEND_CUDA + TM_SNAPSHOT + TM_JOB, env_extra=env, hooks=False)
        calls = tm_lines(lines)
        status = [l for l in calls if l.startswith("tensor_map_status ")]
        name = "tensor map attached (bridge built by the job's hooks, snapshot fed)"
        ok = calls[:1] == ["tensor_map_wanted 1"] and calls[1:3] == \
            ["tensor_event 2 0 4096 2097152", "tensor_event 0 0 4096 500"] and len(status) == 1 and \
            status[0].startswith("tensor_map_status 1 torch ") and \
            "1 blocks in 1 segments from the snapshot; bridge built in" in status[0]
        report(name + ": one wanted, the snapshot's events, one status(1)", "passed" if ok else "failed",
               "" if ok else f"calls {calls} stderr {proc.stderr.strip()[-400:]}")
        ok = same_job(proc, plain)
        report(name + ": output and exit code unchanged", "passed" if ok else "failed",
               "" if ok else f"rc {proc.returncode}/{plain.returncode} out {proc.stdout!r}/{plain.stdout!r} "
               f"err {proc.stderr[-300:]!r}/{plain.stderr[-300:]!r}")
        ran = open(mark).read().splitlines() if os.path.exists(mark) else []
        ok = ran == ["ran LD_PRELOAD=unset CUDA_INJECTION64_PATH=unset"]
        report(name + ": one compile, without LD_PRELOAD and CUDA_INJECTION64_PATH", "passed" if ok else "failed",
               "" if ok else f"compiler runs: {ran}")
        left = os.listdir(tmpdir)
        report(name + ": nothing left in TMPDIR", "passed" if not left else "failed", "" if not left else str(left))
        # A compiler refusing -std=c++20: the second try (-std=c++17, for older
        # torch) is the one loaded and attached. torch 2.15's headers need
        # C++20, so this compiler builds that try as C++20 underneath.
        c17, ran17 = recording_compiler(
            tmp, 'case "$*" in *-std=c++20*) echo "error: no c++20 here"; exit 1;; esac\n'
            'for a; do shift; [ "$a" = -std=c++17 ] && a=-std=c++20; set -- "$@" "$a"; done\nexec g++ "$@"', "cxx17")
        proc, lines = run_python(TM_PRETEND_CUDA + TM_SNAPSHOT + TM_JOB, env_extra=dict(env, CXX=c17))
        status = [l for l in lines if l.startswith("tensor_map_status ")]
        runs = len(open(ran17).read().splitlines()) if os.path.exists(ran17) else 0
        ok = len(status) == 1 and status[0].startswith("tensor_map_status 1 ") and runs == 2
        report(name + ": -std=c++17 tried when -std=c++20 fails", "passed" if ok else "failed",
               "" if ok else f"status {status}, {runs} compiler runs, err {proc.stderr[-300:]!r}")


def test_tensor_map_failures():
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty-bin")
        os.mkdir(empty)
        tmpdir = os.path.join(tmp, "tmpdir")
        os.mkdir(tmpdir)
        base = {"FAKE_NUMTRACE_TENSOR_MAP": "1", "TMPDIR": tmpdir}
        bad_cxx, _ = recording_compiler(
            tmp, "echo 'numtrace_alloc_bridge.cc:19:10: fatal error: planted.h: No such file' >&2; exit 1", "bad-cxx")
        # An old compiler: refuses -std=c++20, then the headers fail under c++17.
        old_cxx, _ = recording_compiler(
            tmp, 'case "$*" in *-std=c++20*) echo "cc1plus: error: unrecognized command-line option \'-std=c++20\'";; '
            '*) echo "CUDACachingAllocator.h:9:1: error: planted c++17 failure";; esac; exit 1', "old-cxx")
        cases = [
            ("no compiler (CXX missing, none on PATH), attach from the step hook", TM_JOB_NO_FORWARD,
             dict(base, CXX=os.path.join(tmp, "missing", "c++"), PATH=empty),
             lambda d: d.startswith("0 no C++ compiler") and "missing/c++" in d),
            ("no compiler (CXX unset, none on PATH)", TM_JOB,
             dict(base, PATH=empty), lambda d: d.startswith("0 no C++ compiler") and "c++, g++, clang++" in d),
            ("a compile error", TM_JOB, dict(base, CXX=bad_cxx),
             lambda d: d.startswith("0 the allocator bridge did not compile") and "planted.h" in d),
            ("an old compiler (no -std=c++20, headers fail under c++17): both errors", TM_JOB, dict(base, CXX=old_cxx),
             lambda d: "unrecognized command-line option '-std=c++20' (with -std=c++17: "
                       "CUDACachingAllocator.h:9:1: error: planted c++17 failure)" in d),
        ]
        for what, job, env, good in cases:
            if "CXX" not in env:
                env["CXX"] = ""  # unset for the hooks: an empty CXX counts as none
            proc, lines = run_python(TM_PRETEND_CUDA + job, env_extra=env)
            plain, _ = run_python(TM_PRETEND_CUDA + job, env_extra=env, hooks=False)
            status = [l[len("tensor_map_status "):] for l in lines if l.startswith("tensor_map_status ")]
            ok = len(status) == 1 and good(status[0]) and same_job(proc, plain) and not os.listdir(tmpdir)
            report(f"tensor map failure, {what}: one status(0) naming it, the job unchanged",
                   "passed" if ok else "failed",
                   "" if ok else f"status {status} rc {proc.returncode}/{plain.returncode} left {os.listdir(tmpdir)} "
                   f"err {proc.stderr[-300:]!r}")
        # Not needed, or not wanted: no build either way.
        cxx, mark = recording_compiler(tmp)
        backend = "torch.cuda.memory.get_allocator_backend = lambda: 'cudaMallocAsync'\n"
        for what, code, env, want in [
                ("allocator backend cudaMallocAsync: one status(2), no build", TM_PRETEND_CUDA + backend + TM_JOB,
                 dict(base, CXX=cxx),
                 ["tensor_map_wanted 1", "tensor_map_status 2 allocator backend cudaMallocAsync: every tensor is "
                  "its own driver allocation"]),
                ("not wanted (NUMTRACE_ALLOCATOR=async, or no capture): no status, no build",
                 TM_PRETEND_CUDA + TM_JOB, dict(base, CXX=cxx, FAKE_NUMTRACE_TENSOR_MAP="0"),
                 ["tensor_map_wanted 0"])]:
            proc, lines = run_python(code, env_extra=env)
            plain, _ = run_python(code, env_extra=env, hooks=False)
            ok = tm_lines(lines) == want and not os.path.exists(mark) and same_job(proc, plain)
            report(f"tensor map, {what}", "passed" if ok else "failed",
                   "" if ok else f"calls {tm_lines(lines)} built={os.path.exists(mark)} err {proc.stderr[-300:]!r}")


def test_tensor_map_compiled():
    """Under torch.compile: the waiting hook and the attach add no graph break, recompile or graph."""
    code = NESTED.replace("NAME", repr("mlp")).replace("COMPILE", "True").replace("    BROKEN", "")
    for what, prefix in (("waiting for CUDA", ""), ("attaching at the first forward", TM_PRETEND_CUDA + TM_SNAPSHOT)):
        name = f"tensor map under torch.compile, {what}"
        with tempfile.TemporaryDirectory() as tmp:
            # No recording CXX here: Inductor's CPU backend runs $CXX too.
            env = {"FAKE_NUMTRACE_TENSOR_MAP": "1"}
            proc, lines = run_python(prefix + code, env_extra=env)
            plain, _ = run_python(prefix + code, env_extra=env, hooks=False)
            got, want = last_json(proc), last_json(plain)
            if got is None or want is None:
                skipped_or_failed(name, None if got is not None else f"rc={proc.returncode} {proc.stderr.strip()}",
                                  None if want is not None else f"rc={plain.returncode} {plain.stderr.strip()}")
                continue
            calls = tm_lines(lines)
            status = [l for l in calls if l.startswith("tensor_map_status ")]
            # Waiting: not even wanted() is asked; attaching: once, attached.
            if prefix:
                expected = len(status) == 1 and status[0].startswith("tensor_map_status 1 ") and \
                    calls.count("tensor_map_wanted 1") == 1
            else:
                expected = calls == []
            ok = (got["graph_breaks"], got["recompiles"], got["unique_graphs"]) == \
                (want["graph_breaks"], want["recompiles"], want["unique_graphs"]) and \
                got["losses"] == want["losses"] and expected
            report(name + ": loss bitwise unchanged, no graph break, recompile or graph added",
                   "passed" if ok else "failed",
                   f"hooks {dict(got, losses='...')}, none {dict(want, losses='...')}, calls {calls[:4]}")


ENVIRONMENT_JOB = """
import torch
model = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
torch.set_float32_matmul_precision("high")          # after the import: before captured step 2
torch.use_deterministic_algorithms(True, warn_only=True)
for step in range(5):
    if step == 3:
        torch.set_float32_matmul_precision("medium")  # after the captured step
        torch.use_deterministic_algorithms(False)
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    opt.zero_grad()
print("done")
"""


def test_environment():
    proc, lines = run_python(ENVIRONMENT_JOB, env_extra={"FAKE_NUMTRACE_ENV": "1", "FAKE_NUMTRACE_CAPTURED": "2"})
    name = "environment: torch's settings, as captured step 2 saw them"
    if proc.returncode != 0 or "done" not in proc.stdout:
        report(name, "failed", proc.stderr.strip()[-400:])
        return
    values = {}
    history = {}
    for line in lines:
        if line.startswith("env "):
            _, key, value = line.split(" ", 2)
            values[key] = value
            history.setdefault(key, []).append(value)
    import torch
    want = {"torch.version": torch.__version__, "torch.float32_matmul_precision": "high",
            "torch.deterministic_algorithms": "warn_only", "torch.matmul.allow_tf32": None,
            "torch.cudnn.benchmark": "false", "torch.sdp.math": "true", "python.version": None}
    bad = [f"{k}={values.get(k)!r}" for k, v in want.items()
           if k not in values or (v is not None and values[k] != v)]
    if history.get("torch.float32_matmul_precision", [None])[0] != "highest":
        bad.append(f"at import {history.get('torch.float32_matmul_precision')}")
    report(name, "failed" if bad else "passed", "; ".join(bad) + f" (of {sorted(values)})" if bad else "")


# Every case runs its interpreters in its own temporary directory with its
# own copy of the environment, so cases are independent and run side by side
# (NUMTRACE_TORCH_JOBS at a time, default one per core): the wall time is
# about that of the longest cases, not of all of them.
# Every test_* function of this file is a case (none can be left out by
# mistake), in the order defined, except that the longest go first (about a
OPS_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ops_model.py")


def ops_env(bug):
    env = dict(os.environ, BUG=bug)
    for k in ("PYTHONPATH", "NUMTRACE_LIB", "NUMTRACE_LIB_PATH"):
        env.pop(k, None)
    return env


def run_ops(tmp, bug, ops=True, steps="0", watch=None, label=""):
    """ops_model.py with BUG=bug under `numtrace run --ops --steps STEPS [--watch=WATCH]` (or plain python);
    (proc, run dir)."""
    run_dir = os.path.join(tmp, "run-" + bug + label + ("-ops" if ops else "-plain") + ("-" + watch if watch else ""))
    cmd = ([NUMTRACE, "run", "-o", run_dir, "--ops", "--steps", steps] + (["--watch=" + watch] if watch else []) +
           ["--"] if ops else []) + [sys.executable, OPS_MODEL]
    proc = subprocess.run(cmd, env=ops_env(bug), capture_output=True, text=True, timeout=900, cwd=tmp)
    return proc, run_dir


def ops_diff(tmp, a, b):
    summary = os.path.join(tmp, "%s-%s.json" % (os.path.basename(a), os.path.basename(b)))
    proc = subprocess.run([NUMTRACE, "diff", a, b, "--json", summary], capture_output=True, text=True, timeout=600)
    data = json.load(open(summary)) if os.path.isfile(summary) else {}
    return proc, data


def test_ops_level():
    """Operator level on the CPU: same job twice identical, planted bugs named at their op and module."""
    name = "operator level (--ops)"
    bugs = ["none", "again", "const", "gelu", "mask", "bcast", "nan", "eval", "bf16", "checkpoint", "subtol", "refactor"]
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = dict(zip(bugs, pool.map(lambda b: run_ops(tmp, "" if b == "again" else b), bugs)))
            plain, _ = run_ops(tmp, "", ops=False)
        base_proc, base = runs["none"]
        if base_proc.returncode != 0:
            report(name, "failed", f"rc={base_proc.returncode} {base_proc.stderr.strip()[-400:]}")
            return
        trace = open(os.path.join(base, "rank_0.ntrace.jsonl")).read().splitlines()
        header, records = json.loads(trace[0]), [json.loads(l) for l in trace[1:]]
        ops = [r for r in records if r.get("type") == "kernel"]
        checks = {
            "header capture.level ops": header.get("capture", {}).get("level") == "ops",
            "records are ops with shape and device": bool(ops) and all(
                r.get("level") == "op" and "grid" not in r and
                all("shape" in b and b.get("device") == "cpu" for b in r["buffers"]) for r in ops),
            "forward, backward and optimizer ops": {"forward", "backward", "optimizer"} <= {r.get("phase") for r in ops},
            "an in-place op's written argument has pre": any(
                r["name"].endswith("_") and any(b["role"] == "out" and "pre" in b for b in r["buffers"]) for r in ops),
            "stdout and exit status unchanged": (base_proc.stdout, base_proc.returncode) == (plain.stdout, plain.returncode),
        }
        details = {}
        proc, _ = ops_diff(tmp, base, runs["again"][1])
        checks["the same job twice is identical (diff exit 0)"] = proc.returncode == 0 and "identical" in proc.stdout
        # Each planted bug: the one root's operator and module (None: the
        # loss, outside every module). eval(): A's dropout (block.mlp.drop)
        # has no partner in B, so the root is the residual add that reads
        # what it wrote; bf16: the first op computing in bf16 (q @ k.T), not
        # the views of B's casts before it; bcast: the sub whose output the
        # mis-shaped target broadcast to (4, 4, 8).
        want = {"const": ("aten::div", "block.attn"), "mask": ("aten::triu", "block.attn"),
                "gelu": ("aten::gelu", "block.mlp"), "bcast": ("aten::sub", None),
                "eval": ("aten::add", "block"), "bf16": ("aten::bmm", "block.attn")}
        for bug, (op, scope) in want.items():
            proc, data = ops_diff(tmp, base, runs[bug][1])
            roots = data.get("roots") or {}
            first = roots.get("first") or {}
            got = (first.get("a_op"), first.get("a_scope"), roots.get("count"))
            what = f"{bug}: one root, at {op} in {scope if scope is not None else '(no module)'}"
            checks[what] = proc.returncode == 1 and got == (op, scope, 1)
            details[what] = f"rc={proc.returncode}, root (op, scope, count) {got}"
        proc, _ = ops_diff(tmp, base, runs["nan"][1])
        checks["first NaN named at its operator (aten::log in block.mlp)"] = \
            "first NaN/Inf in B: seq" in proc.stdout and "aten::log in block.mlp" in proc.stdout.split("first NaN/Inf in B:")[1].splitlines()[0]
        proc, _ = ops_diff(tmp, base, runs["checkpoint"][1])
        checks["activation checkpointing raises no false divergence"] = proc.returncode == 0
        proc, _ = ops_diff(tmp, base, runs["subtol"][1])
        checks["a sub-tolerance change (scale * (1 + 2e-7)) raises no divergence"] = proc.returncode == 0
        proc, _ = ops_diff(tmp, base, runs["refactor"][1])
        checks["a same-math refactor (mm + add in B for addmm in A) raises no false divergence"] = proc.returncode == 0
        for what, ok in checks.items():
            report(f"{name}: {what}", "passed" if ok else "failed",
                   "" if ok else details.get(what, base_proc.stderr.strip()[-300:]))


def trace_of(run_dir):
    """(header, records) of a run directory's rank 0 trace."""
    lines = open(os.path.join(run_dir, "rank_0.ntrace.jsonl")).read().splitlines()
    return json.loads(lines[0]), [json.loads(l) for l in lines[1:]]


def test_ops_watch():
    """Watch mode at operator level (issue 24): `numtrace run --ops --watch` digests every op of every step; the
    same job twice is identical, a planted bug is named at its first differing step and op; `numtrace twice
    --ops` runs at operator level, and `twice --ops --watch` captures the first differing step in full at
    operator level."""
    name = "operator level watch (--ops --watch)"
    jobs = [("none", "", "full"), ("none", "-again", "full"), ("const", "", "full"), ("late", "", "full"),
            ("none", "", "sampled"), ("const", "", "sampled")]
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = list(pool.map(lambda j: run_ops(tmp, j[0], steps="1", watch=j[2], label=j[1]), jobs))
        base_proc, base = runs[0]
        if base_proc.returncode != 0:
            report(name, "failed", f"rc={base_proc.returncode} {base_proc.stderr.strip()[-400:]}")
            return
        header, records = trace_of(base)
        digests = [r for r in records if r.get("type") == "digest"]
        names = {r["id"]: r["name"] for r in records if r.get("type") == "kernel_name"}
        ops = [r for r in records if r.get("type") == "kernel"]
        checks, details = {}, {}
        checks["header capture.level ops, capture.watch full"] = \
            (header["capture"].get("level"), header["capture"].get("watch")) == ("ops", "full")
        checks["a digest per step (0-2), each of its ops, named by operator"] = \
            [d["step"] for d in digests][:3] == [0, 1, 2] and all(d["kernels"] > 50 and not d.get("lost") for d in digests[:3]) \
            and all("::" in names[i] for d in digests for i in d["names"]) and "aten::div" in {names[i] for i in digests[0]["names"]}
        checks["step 1 also in full, as many op records as its digest has ops"] = \
            {r.get("step") for r in ops} == {1} and len(ops) == digests[1]["kernels"]
        details["a digest per step (0-2), each of its ops, named by operator"] = str([(d["step"], d["kernels"]) for d in digests])
        proc, data = ops_diff(tmp, base, runs[1][1])
        steps = (data.get("ranks") or [{}])[0].get("steps") or {}
        checks["the same job twice is identical (diff exit 0, every step compared)"] = \
            proc.returncode == 0 and "identical" in proc.stdout and steps.get("compared", 0) >= 3 and not steps.get("notes")
        details["the same job twice is identical (diff exit 0, every step compared)"] = proc.stdout[-400:]
        for (bug, watch, step, op), (_, b) in zip([("const", "full", 0, "aten::div"), ("late", "full", 2, None),
                                                    ("const", "sampled", 0, "aten::div")], (runs[2], runs[3], runs[5])):
            a = base if watch == "full" else runs[4][1]
            proc, data = ops_diff(tmp, a, b)
            steps = (data.get("ranks") or [{}])[0].get("steps") or {}
            first = steps.get("first_kernel") or {}
            what = f"{bug} ({watch}): first differing step {step}" + (f" at {op}" if op else "")
            checks[what] = proc.returncode == 1 and steps.get("first_differing") == step and \
                (op is None or (first.get("a_name"), first.get("b_name")) == (op, op))
            details[what] = f"rc={proc.returncode} steps={steps}"
        # numtrace twice --ops: both runs at operator level, concluded as at kernel level.
        twice_dir = os.path.join(tmp, "twice")
        proc = subprocess.run([NUMTRACE, "twice", "-o", twice_dir, "--ops", "--steps", "1", "--", sys.executable,
                               OPS_MODEL], env=ops_env(""), capture_output=True, text=True, timeout=900, cwd=tmp)
        levels = [trace_of(os.path.join(twice_dir, r))[0]["capture"].get("level")
                  for r in ("run1", "run2") if os.path.isfile(os.path.join(twice_dir, r, "rank_0.ntrace.jsonl"))]
        what = "twice --ops: both runs at operator level, bitwise identical (exit 0)"
        checks[what] = proc.returncode == 0 and levels == ["ops", "ops"] and "bitwise identical" in proc.stdout
        details[what] = f"rc={proc.returncode} levels={levels} {proc.stdout[-300:]} {proc.stderr[-300:]}"
        # twice --ops --watch on a job that differs from run to run from step 1: the hunt names step 1 and
        # captures it in full, still at operator level.
        hunt_dir = os.path.join(tmp, "hunt")
        proc = subprocess.run([NUMTRACE, "twice", "-o", hunt_dir, "--ops", "--watch", "--", sys.executable,
                               OPS_MODEL], env=ops_env("flaky"), capture_output=True, text=True, timeout=900, cwd=tmp)
        full = [trace_of(os.path.join(hunt_dir, "step1-" + r)) for r in ("run1", "run2")
                if os.path.isfile(os.path.join(hunt_dir, "step1-" + r, "rank_0.ntrace.jsonl"))]
        what = "twice --ops --watch: first differing step 1, captured in full at operator level"
        checks[what] = proc.returncode == 1 and "first differing step: 1" in proc.stdout and \
            "operator call " in proc.stdout.split("first differing step: 1")[-1].splitlines()[0] and len(full) == 2 and \
            all(h["capture"].get("level") == "ops" and any(r.get("type") == "kernel" and r.get("step") == 1 for r in recs)
                for h, recs in full)
        details[what] = f"rc={proc.returncode} full={len(full)} {proc.stdout[-400:]} {proc.stderr[-300:]}"
        for what, ok in checks.items():
            report(f"{name}: {what}", "passed" if ok else "failed",
                   "" if ok else details.get(what, base_proc.stderr.strip()[-300:]))


GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                      "test", "data", "ops_golden", "rank_0.ntrace.jsonl.gz")


def test_ops_environment():
    """Two CPU runs at operator level whose scripts set other float32 matmul precision and deterministic
    algorithms after import: the diff names both, each with its effect (issue 25), through numtrace run's
    installed hooks."""
    name = "environment at operator level"
    with tempfile.TemporaryDirectory() as tmp:
        (pa, a), (pb, b) = run_ops(tmp, ""), run_ops(tmp, "settings")
        proc, data = ops_diff(tmp, a, b)
        differs = {d["key"]: d for d in (data.get("environment") or {}).get("differs", [])}
        checks = {
            "both runs captured": pa.returncode == 0 and pb.returncode == 0,
        }
        show = subprocess.run([NUMTRACE, "show", os.path.join(a, "rank_0.ntrace.jsonl"), "--env"],
                              capture_output=True, text=True, timeout=300)
        checks["torch's version recorded (numtrace run installed the environment hook)"] = \
            "torch.version" in show.stdout
        for key, a_val, b_val in (("torch.float32_matmul_precision", "highest", "high"),
                                  ("torch.deterministic_algorithms", "false", "true")):
            d = differs.get(key, {})
            checks[f"{key}: {a_val} vs {b_val}, with its effect"] = \
                (d.get("a"), d.get("b")) == (a_val, b_val) and len(d.get("effect", "")) > 10
        checks["the terminal names the differing settings before any kernel"] = \
            "torch.float32_matmul_precision" in proc.stdout.split("first divergence")[0]
        for what, ok in checks.items():
            report(f"{name}: {what}", "passed" if ok else "failed",
                   "" if ok else (json.dumps(data.get("environment"))[:400] + " " + pb.stderr.strip()[-200:]))


def test_ops_golden_gate():
    """The numerics gate of docs/walkthroughs.md: step 0 at op level against the gzipped golden, --strict."""
    name = "numerics gate (golden op-level trace)"
    with tempfile.TemporaryDirectory() as tmp:
        results_ = {}
        for bug in ("", "const"):
            proc, run_dir = run_ops(tmp, bug)
            gate = subprocess.run([NUMTRACE, "diff", GOLDEN, os.path.join(run_dir, "rank_0.ntrace.jsonl"), "--strict"],
                                  capture_output=True, text=True, timeout=600)
            results_[bug] = (proc.returncode, gate.returncode, gate.stdout[:300] + gate.stderr[:300])
        ok = results_[""][:2] == (0, 0)
        report(f"{name}: the model as blessed passes", "passed" if ok else "failed", "" if ok else str(results_[""]))
        ok = results_["const"][:2] == (0, 1)
        report(f"{name}: a wrong constant fails it", "passed" if ok else "failed", "" if ok else str(results_["const"]))


def test_ops_level_compiled():
    """--ops in a torch.compile'd job: the job unchanged (losses, graphs), the one line saying what is not captured."""
    name = "operator level under torch.compile"
    with tempfile.TemporaryDirectory() as tmp:
        proc, run_dir = run_ops(tmp, "compile", steps="2")
        plain, _ = run_ops(tmp, "compile", ops=False)
        got, want = last_json(proc), last_json(plain)
        if got is None or want is None:
            skipped_or_failed(name, None if got is not None else f"rc={proc.returncode} {proc.stderr.strip()[-300:]}",
                              None if want is not None else f"rc={plain.returncode} {plain.stderr.strip()[-300:]}")
            return
        checks = {
            "losses bitwise unchanged": got["losses"] == want["losses"],
            "no graph break or graph added": (got["graph_breaks"], got["unique_graphs"]) ==
                                             (want["graph_breaks"], want["unique_graphs"]),
            "one line says compiled code is not captured": proc.stderr.count("operator-level capture stays out") == 1,
            "the run's closing line says what operator level captures": "captured no operator call" in proc.stderr,
        }
        for what, ok in checks.items():
            report(f"{name}: {what}", "passed" if ok else "failed", "" if ok else proc.stderr.strip()[-400:])


def test_gpu_check_ops_rows():
    """scripts/gpu-check.sh part 3's operator-level rows, from a bundle laid out as gpu-bundle.sh makes it, on the
    CPU (NUMTRACE_CHECK_OPS_DEVICE=cpu, NUMTRACE_CHECK_FORCE_GPU=1; the part's other steps read out of time): both
    rows pass with the real torch and libnumtrace.so; asked for cuda where torch has none, the first row fails and
    says why."""
    name = "gpu-check operator-level rows"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    build = os.path.dirname(os.path.dirname(NUMTRACE))
    with tempfile.TemporaryDirectory() as tmp:
        bundle = os.path.join(tmp, "bundle")
        for d in ("bin", "lib", "test", "scripts"):
            os.makedirs(os.path.join(bundle, d))
        os.symlink(NUMTRACE, os.path.join(bundle, "bin", "numtrace"))
        os.symlink(os.path.join(build, "lib", "libnumtrace.so"), os.path.join(bundle, "lib", "libnumtrace.so"))
        os.symlink(HOOKS, os.path.join(bundle, "scripts", "hooks"))
        for f in ("torch_checks.py", "check_trace.py"):
            shutil.copy(os.path.join(root, "test", "gpu", f), os.path.join(bundle, "test"))
        shutil.copy(os.path.join(root, "scripts", "gpu-check.sh"), bundle)
        with open(os.path.join(bundle, "COMMIT"), "w") as f:
            f.write("real_torch_test\n")
        others = ("step-plain-async", "step-async", "ro-async", "ro-caching", "tmap-plain", "tmap-eager", "tmap-expandable")
        env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
                   NUMTRACE_CHECK_FORCE_GPU="1", NUMTRACE_CHECK_BUDGET_S="400",
                   NUMTRACE_CHECK_LIMITS=" ".join(["ops-cuda=300"] + [s + "=999" for s in others]))
        for k in ("PYTHONPATH", "NUMTRACE_LIB", "NUMTRACE_LIB_PATH", "NUMTRACE_CHECK_WORK", "OUT"):
            env.pop(k, None)

        def part3(device):
            out = os.path.join(tmp, "out-" + device)
            proc = subprocess.run(["bash", os.path.join(bundle, "gpu-check.sh"), "--part", "3", out],
                                  env=dict(env, NUMTRACE_CHECK_OPS_DEVICE=device), capture_output=True, text=True,
                                  timeout=600)
            # The table's columns: check (padded to 44), status, reason.
            rows = {m.group(1).rstrip(): (m.group(2), m.group(3)) for m in
                    (re.match(r"^(.{44,}?) (pass|fail|skip|info) +(.*)$", line) for line in proc.stdout.splitlines())
                    if m}
            return proc, rows

        cpu, rows = part3("cpu")
        checks = {
            "cpu: tensors measured (pass)": rows.get("--ops: cpu tensors measured", ("", ""))[0] == "pass",
            "cpu: calls digested (pass)": rows.get("--ops --watch: cpu calls digested", ("", ""))[0] == "pass",
            "cpu: the footer row": rows.get("footer operator level", ("", ""))[0] == "info",
            "cpu: exit 0, the other steps out of time": cpu.returncode == 0 and
                "out of time" in rows.get("torch train step (async): params bitwise equal", ("", ""))[1],
        }
        cuda, cuda_rows = part3("cuda")
        import torch
        if torch.cuda.is_available():
            report(name + ": cuda", "skipped", "this machine has CUDA: the cuda rows are the GPU session's")
        else:
            status, why = cuda_rows.get("--ops: cuda tensors measured", ("", ""))
            checks["cuda without CUDA: fails saying so (exit 1)"] = \
                cuda.returncode == 1 and status == "fail" and "has no CUDA" in why
        for what, ok in checks.items():
            report(f"{name}: {what}", "passed" if ok else "failed",
                   "" if ok else (cpu.stdout + cpu.stderr + cuda.stdout)[-900:])


# minute each here: the tensor map under torch.compile, its compile
# failures), so the short ones fill in beside them.
SLOWEST = ["test_tensor_map_compiled", "test_tensor_map_failures", "test_provenance_compiled"]
def test_debugmode_json_logs():
    """The committed DebugMode JSON logs (test/data/debugmode-json) made again
    by this torch: numtrace diff reads them, finds the same run identical, the
    planted constant at its op in its module, and where a longer run parts."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, os.path.join(here, "make_debugmode_json.py"), tmp],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            report("debugmode json logs", "failed", "generator: " + proc.stderr[-400:])
            return

        def diff(a, b):
            return subprocess.run([NUMTRACE, "diff", os.path.join(tmp, a + ".json"), os.path.join(tmp, b + ".json")],
                                  capture_output=True, text=True, timeout=300)
        same, planted, longer = diff("base", "same"), diff("base", "constant"), diff("base", "longer")
        problems = []
        if same.returncode != 0 or "identical" not in same.stdout:
            problems.append("same: exit %d %s" % (same.returncode, (same.stdout + same.stderr)[-300:]))
        if planted.returncode != 1 or "starts at layers.0.attn/aten::mul.Tensor in layers.0.attn" not in planted.stdout:
            problems.append("constant: exit %d %s" % (planted.returncode, (planted.stdout + planted.stderr)[-300:]))
        if longer.returncode != 1 or "the runs part at B#21 layers.1.norm" not in longer.stdout:
            problems.append("longer: exit %d %s" % (longer.returncode, (longer.stdout + longer.stderr)[-300:]))
        report("debugmode json logs", "failed" if problems else "passed", "; ".join(problems))


CASES = sorted((f for n, f in list(globals().items()) if n.startswith("test_") and callable(f)),
               key=lambda f: SLOWEST.index(f.__name__) if f.__name__ in SLOWEST else len(SLOWEST))


def run_case(case):
    """Runs one case; a case that raises is a failure, never a lost line."""
    start = time.monotonic()
    try:
        case()
    except Exception:
        report(case.__name__, "failed", "raised: " + traceback.format_exc()[-600:])
    return time.monotonic() - start


if __name__ == "__main__":
    import torch, triton, numpy  # noqa: E401 - the real ones, from the venv
    print(f"torch {torch.__version__}, triton {triton.__version__}, numpy {numpy.__version__}")
    jobs = int(os.environ.get("NUMTRACE_TORCH_JOBS") or os.cpu_count() or 1)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        seconds = dict(zip((c.__name__ for c in CASES), pool.map(run_case, CASES)))
    slowest = ", ".join(f"{n} {s:.0f} s" for n, s in sorted(seconds.items(), key=lambda kv: -kv[1])[:3])
    print(f"torch_test: {results['passed']} passed, {results['failed']} failed, {results['skipped']} skipped"
          f" in {time.monotonic() - start:.0f} s, {jobs} at a time (slowest: {slowest})")
    sys.exit(1 if results["failed"] else 0)
