"""Pause numtrace's measurement while Inductor or Triton benchmark (review finding 7).

numtrace's reductions run on the job's stream: measured, an autotuner's
timings grow, it may pick another config (other bits), and `numtrace twice`
would report a divergence numtrace caused. So the benchmarking entry points
run between numtrace_pause() and numtrace_resume() (shim/api/numtrace.h):
their launches are neither measured nor counted (footer launches_paused).

Hook points (checked in torch 2.15 / Triton 3.9):
  * triton.testing.do_bench, do_bench_cudagraph: Triton's own autotuner
    (triton.runtime.autotuner, via driver.get_benchmarker()) and Inductor's
    TritonBenchmarker import them at call time, so replacing the module
    attributes reaches them;
  * torch._inductor.runtime.benchmarking: every Benchmarker class's
    benchmark / benchmark_gpu / benchmark_gpu_with_cuda_graph (runtime
    autotuning of multi-config kernels, CachingAutotuner.bench, and
    max-autotune's select_algorithm through autotune_process);
  * torch._inductor.utils.do_bench_using_profiling (select_algorithm and
    CachingAutotuner with profile_bandwidth_with_do_bench_using_profiling).
torch.backends.cudnn.benchmark picks algorithms inside cuDNN, where no hook
reaches: docs/gpu.md says to capture after warm-up.

HOOKS lists (module, installer) pairs for sitecustomize's import watcher.
Wrappers keep the wrapped signature (functools.wraps: Inductor inspects
do_bench's parameters) and are installed once.
"""
import functools

_BENCHMARKER_METHODS = ("benchmark", "benchmark_gpu", "benchmark_gpu_with_cuda_graph")


def paused(lib, fn):
    """fn wrapped so that it runs with numtrace's measurement paused on this thread."""
    # An older libnumtrace without the calls: leave fn as it is.
    if getattr(fn, "_numtrace_paused", False) or not hasattr(lib, "numtrace_pause"):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        lib.numtrace_pause()
        try:
            return fn(*args, **kwargs)
        finally:
            lib.numtrace_resume()

    wrapper._numtrace_paused = True
    return wrapper


def _wrap_attributes(lib, owner, names):
    for name in names:
        fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if callable(fn):
            setattr(owner, name, paused(lib, fn))


def install_triton(lib, testing_module):
    _wrap_attributes(lib, testing_module, ("do_bench", "do_bench_cudagraph"))


def install_inductor(lib, benchmarking_module):
    for value in list(vars(benchmarking_module).values()):
        if isinstance(value, type) and issubclass(value, getattr(benchmarking_module, "Benchmarker", ())):
            _wrap_attributes(lib, value, _BENCHMARKER_METHODS)


def install_inductor_utils(lib, utils_module):
    _wrap_attributes(lib, utils_module, ("do_bench_using_profiling",))


HOOKS = (("triton.testing", install_triton),
         ("torch._inductor.runtime.benchmarking", install_inductor),
         ("torch._inductor.utils", install_inductor_utils))
