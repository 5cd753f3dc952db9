"""Cost of the tensor map's module pre-hook while it waits for CUDA (scripts/hooks/numtrace_tensor_map.py).

    python bench/hooks/tensor_map_wait_cost.py BUILD_DIR [--calls N]

Until CUDA is initialized (a CPU-only job: forever) the tensor map's global
module forward pre-hook checks torch.compiler.is_compiling(), its flag and
torch.cuda.is_initialized() on every module call. Runs the same loop as
disarmed_cost.py (a chain of 1000 nn.Linear(16, 16) on a 1x16 input under
torch.no_grad, best of 5, one thread) in fresh interpreters: no hook; one
global no-op pre-hook (torch's own global-hook path, for scale); the tensor
map installed with the fake libnumtrace of the build (test-bin/), CUDA never
initialized. Prints the time per module call. Not a test: figures go to
docs/benchmarks.md.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from disarmed_cost import module_call_ns  # noqa: E402  (the same timed loop)

# argv: calls, mode, hooks folder, fake library. CUDA is never initialized
# here (the loop runs on the CPU), so the tensor map keeps waiting.
SETUP = r"""
import ctypes, importlib.util
mode, hooks, fake = sys.argv[2], sys.argv[3], sys.argv[4]
if mode == "noop":
    from torch.nn.modules import module as nn_module
    nn_module.register_module_forward_pre_hook(lambda *a: None)
elif mode == "tensor map":
    spec = importlib.util.spec_from_file_location("numtrace_tensor_map", hooks + "/numtrace_tensor_map.py")
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)
    assert tm.install(ctypes.CDLL(fake), torch) is not None
"""


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 20
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    hooks = os.path.join(root, "scripts", "hooks")
    fake = os.path.join(build, "test-bin", "libfake_numtrace.so")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMTRACE_LIB_PATH")}
    for mode in ("none", "noop", "tensor map"):
        ns = module_call_ns(env, calls, SETUP, (mode, hooks, fake))
        print("%-10s %6.2f us per module call" % (mode, ns / 1000))


if __name__ == "__main__":
    main()
