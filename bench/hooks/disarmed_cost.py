"""Cost of the PyTorch provenance hooks when disarmed (outside captured steps).

    python bench/hooks/disarmed_cost.py BUILD_DIR [--calls N]

Runs the same loop in three fresh interpreters - no hooks; the hooks installed
(scripts/hooks on PYTHONPATH, the built libnumtrace.so) with NUMTRACE_STEPS
naming a step the loop never reaches, so they stay disarmed; and the hooks
armed (every step captured, NUMTRACE_STEPS=all) for scale - and prints the
time per module call: a chain of 1000 small modules (nn.Linear(16, 16) on a
1x16 input, under torch.no_grad) called N times, best of 5 repetitions.
Not a test: figures go to docs/benchmarks.md.
"""
import json
import os
import subprocess
import sys
import time

# The timed loop, shared with tensor_map_wait_cost.py: PRELUDE, a caller's
# setup (hooks to install), then TIMED; argv[1] is the number of calls.
PRELUDE = "import json, sys, time, torch\ntorch.set_num_threads(1)\ncalls = int(sys.argv[1])\n"
TIMED = r"""
chain = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(1000)])
x = torch.randn(1, 16)
best = float("inf")
with torch.no_grad():
    chain(x)
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            chain(x)
        best = min(best, time.perf_counter() - t)
print(json.dumps({"ns_per_module_call": best / (calls * 1001) * 1e9}))
"""


def module_call_ns(env, calls, setup="", args=()):
    """Runs the loop in a fresh interpreter with `env`; nanoseconds per module call."""
    out = subprocess.run([sys.executable, "-c", PRELUDE + setup + TIMED, str(calls), *args], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["ns_per_module_call"]


def run(env_extra, calls):
    env = dict(os.environ)
    for k in ("PYTHONPATH", "NUMTRACE_LIB_PATH", "NUMTRACE_STEPS", "NUMTRACE_HOOKS_LOG"):
        env.pop(k, None)
    env.update(env_extra)
    return module_call_ns(env, calls)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 20
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    hooks = {"PYTHONPATH": os.path.join(root, "scripts", "hooks"),
             "NUMTRACE_LIB_PATH": os.path.join(build, "lib", "libnumtrace.so")}
    none = run({}, calls)
    disarmed = run(dict(hooks, NUMTRACE_STEPS="1000000"), calls)
    armed = run(dict(hooks, NUMTRACE_STEPS="all"), max(1, calls // 10))
    print(f"no hooks:            {none:8.0f} ns per module call")
    print(f"hooks, disarmed:     {disarmed:8.0f} ns per module call (+{disarmed - none:.0f} ns)")
    print(f"hooks, armed (all):  {armed:8.0f} ns per module call (scope push/pop and one op per Linear)")


if __name__ == "__main__":
    main()
