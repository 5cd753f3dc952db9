"""Cost of operator-level capture (NUMTRACE_LEVEL=ops) per module call on the CPU.

    python bench/hooks/op_level_cost.py BUILD_DIR [--calls N]

The loop of disarmed_cost.py (a chain of 1000 nn.Linear(16, 16) on a 1x16
input under torch.no_grad; each call is two ATen ops, aten::t and
aten::addmm) in fresh interpreters: no hooks; the hooks armed at kernel
level (the dispatch mode announcing ops, nothing measured: no CUDA); and at
operator level (every op's tensors handed to libnumtrace, measured by the
host reduction and written). Best of 5. Not a test: figures go to README.md.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from disarmed_cost import run  # noqa: E402


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 2
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as out:
        hooks = {"PYTHONPATH": os.path.join(root, "scripts", "hooks"), "NUMTRACE_OUTPUT_DIR": out,
                 "NUMTRACE_LIB_PATH": os.path.join(build, "lib", "libnumtrace.so"), "NUMTRACE_STEPS": "all"}
        none = run({}, calls)
        armed = run(hooks, calls)
        ops = run(dict(hooks, NUMTRACE_LEVEL="ops"), calls)
    print(f"no hooks:                  {none:9.0f} ns per module call")
    print(f"hooks armed, kernel level: {armed:9.0f} ns per module call (+{armed - none:.0f} ns)")
    print(f"operator level:            {ops:9.0f} ns per module call (+{ops - none:.0f} ns, "
          f"{(ops - none) / 2000:.1f} us per ATen op)")


if __name__ == "__main__":
    main()
