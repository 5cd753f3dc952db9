"""One captured training step of a small transformer: numtrace's operator
level against PyTorch's DebugMode with log_tensor_hashes, side by side.

    python bench/hooks/debugmode_cost.py BUILD_DIR [--repeats R]

The job (JOB below; CPU, one intra-op thread, seed 0): token embedding
(vocab 256, width 64), two nn.TransformerEncoderLayer blocks (4 heads, MLP
256, batch-first), a linear head, cross-entropy, AdamW as constructed by
default; batch 4 x sequence 64; 7 steps, each timed with perf_counter
around forward, backward, optimizer step and zero_grad. Steps 3 and 4 are
captured (the first capture of a process pays one-off costs, the second
shows the steady cost), three ways, each in fresh interpreters:

- plain:     python JOB
- numtrace:  numtrace run -o DIR --ops --steps 3-4 -- python JOB
             (every op of steps 3 and 4 measured by the host reduction and
             written)
- DebugMode: steps 3 and 4 each inside DebugMode(record_nn_module=True) and
             DebugMode.log_tensor_hashes(hash_fn="norm", hash_inputs=True),
             as torchtitan's activation tracer arms it; the logs are kept
             in memory, DebugMode.save_logs to a file is timed apart.

Prints, per mode, the two captured steps (best of R runs each) and the
median of the other steps (not step 0) for scale, and how many records one
captured step holds. Not a test:
figures go to README.md ("Measured figures").
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

CAPTURED = (3, 4)

JOB = r"""
import json, os, sys, time, torch
torch.set_num_threads(1)
torch.manual_seed(0)
V, D, T, B = 256, 64, 64, 4
debugmode = os.environ.get("BENCH_DEBUGMODE") == "1"
captured = [int(s) for s in os.environ["BENCH_CAPTURED"].split(",")]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(V, D)
        self.layers = torch.nn.ModuleList(
            [torch.nn.TransformerEncoderLayer(D, 4, 4 * D, dropout=0.0, batch_first=True) for _ in range(2)])
        self.head = torch.nn.Linear(D, V)

    def forward(self, tokens):
        x = self.emb(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, V, (B, T))
targets = torch.randint(0, V, (B, T))


def step():
    loss = torch.nn.functional.cross_entropy(model(tokens).reshape(-1, V), targets.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


times, records, save_s = [], None, None
for i in range(7):
    if debugmode and i in captured:
        from torch.utils._debug_mode import DebugMode
        t = time.perf_counter()
        with DebugMode(record_nn_module=True) as dm, DebugMode.log_tensor_hashes(hash_fn="norm", hash_inputs=True):
            step()
        times.append(time.perf_counter() - t)
        records = len(dm.logs)
        t = time.perf_counter()
        DebugMode.save_logs(dm.logs, os.path.join(os.environ["BENCH_OUT"], "debugmode.json"))
        save_s = time.perf_counter() - t
        continue
    t = time.perf_counter()
    step()
    times.append(time.perf_counter() - t)
print(json.dumps({"times": times, "records": records, "save_s": save_s}))
"""


def run(mode, numtrace, out):
    """One run of the job in `mode`; its JSON line plus the capture's record count."""
    env = dict(os.environ, BENCH_CAPTURED=",".join(map(str, CAPTURED)), BENCH_OUT=out)
    for k in ("PYTHONPATH", "NUMTRACE_LIB", "NUMTRACE_LIB_PATH", "BENCH_DEBUGMODE"):
        env.pop(k, None)
    cmd = [sys.executable, "-c", JOB]
    run_dir = tempfile.mkdtemp(prefix="run-", dir=out)
    os.rmdir(run_dir)  # numtrace run makes it
    if mode == "numtrace":
        cmd = [numtrace, "run", "-o", run_dir, "--ops", "--steps", f"{CAPTURED[0]}-{CAPTURED[-1]}", "--"] + cmd
    if mode == "DebugMode":
        env["BENCH_DEBUGMODE"] = "1"
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=out)
    if proc.returncode != 0:
        sys.exit(f"{mode}: exit {proc.returncode}: {proc.stderr[-600:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if mode == "numtrace":
        with open(os.path.join(run_dir, "rank_0.ntrace.jsonl")) as f:
            got["records"] = sum('"type":"kernel"' in line for line in f) // len(CAPTURED)
    return got


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    numtrace = os.path.join(build, "bin", "numtrace")
    with tempfile.TemporaryDirectory() as out:
        for mode in ("plain", "numtrace", "DebugMode"):
            runs = [run(mode, numtrace, out) for _ in range(repeats)]
            steps = "  ".join(f"step {c}: {min(r['times'][c] for r in runs) * 1e3:7.1f} ms" for c in CAPTURED)
            others = statistics.median(t for r in runs for i, t in enumerate(r["times"]) if i and i not in CAPTURED)
            line = f"{mode:9s}  {steps}   other steps (median): {others * 1e3:5.1f} ms"
            if runs[0]["records"] is not None:
                line += f"   records: {runs[0]['records']}"
            if runs[0].get("save_s") is not None:
                line += f"   save_logs: {min(r['save_s'] for r in runs) * 1e3:.1f} ms"
            print(line, flush=True)


if __name__ == "__main__":
    main()
