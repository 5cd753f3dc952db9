"""numtrace hooks for PyTorch jobs, loaded through PYTHONPATH by `numtrace run --torch-hooks`.

What the shim cannot see from CUDA alone, supplied without editing the job:
  * step boundaries: numtrace_mark_step() after every optimizer.step(), through
    torch's global optimizer step post-hook; the first one passes the
    optimizer's own step count (numtrace_mark_step_to), so a job resumed from
    a checkpoint numbers its steps as the run that saved it;
  * Triton dtypes: Triton kernel names carry none, so when Triton loads a
    compiled kernel we pass the dtypes of its pointer arguments from the
    kernel's signature to numtrace_annotate_kernel();
  * provenance: module scope, ATen op and phase of each launch in captured
    steps (numtrace_provenance.py, installed once torch is imported);
  * tensor map: each tensor's address and size from PyTorch's caching
    allocator (numtrace_tensor_map.py, installed once torch is imported);
  * environment: torch's settings that decide the numbers (TF32, determinism,
    cuDNN, SDPA, autocast, versions), read once torch is imported and again
    around captured steps (numtrace_environment.py).
Each part is one entry of _HOOKS below (module name, installer), installed
right after that module is first imported.
Every hook is best effort: any failure leaves the job exactly as it was.
Status: written against torch 2.x / Triton 3.x; not yet run on a GPU machine.
"""
import ctypes
import importlib.abc
import importlib.util
import os
import sys

_TRITON_TO_NUMTRACE = {
    "fp64": "f64", "fp32": "f32", "fp16": "f16", "bf16": "bf16",
    "fp8e4nv": "f8e4m3", "fp8e4b8": "f8e4m3", "fp8e5": "f8e5m2", "fp8e5b16": "f8e5m2",
    "i64": "i64", "i32": "i32", "i16": "i16", "i8": "i8", "u8": "u8", "i1": "bool",
    "u64": "i64", "u32": "i32", "u16": "i16",
}


def _load_lib():
    path = os.environ.get("NUMTRACE_LIB_PATH")
    try:
        lib = ctypes.CDLL(path or "libnumtrace.so", mode=ctypes.RTLD_GLOBAL)
        lib.numtrace_mark_step.restype = None
        lib.numtrace_annotate_kernel.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        return lib
    except (OSError, AttributeError):
        return None


def _signature_dtypes(signature):
    """'*bf16' -> bf16 for pointer params, in kernel parameter order; scalars -> raw."""
    out = []
    items = signature.values() if isinstance(signature, dict) else signature
    for ty in items:
        ty = str(ty)
        if ty == "constexpr":
            continue  # compiled away: not a kernel parameter
        if ty.startswith("*"):
            out.append(_TRITON_TO_NUMTRACE.get(ty.lstrip("*k"), "raw"))
        else:
            out.append("raw")
    return out


_provenance = None          # numtrace_provenance.Provenance once torch is imported
_provenance_after_step = None


def _install_triton_hook(lib, compiler_module):
    kernel_cls = getattr(compiler_module, "CompiledKernel", None)
    if kernel_cls is None or getattr(kernel_cls, "_numtrace_hooked", False):
        return
    original_init = kernel_cls.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        try:
            signature = getattr(getattr(self, "src", None), "signature", None)
            name = getattr(self, "name", None) or getattr(self.metadata, "name", None)
            if signature and name:
                dtypes = ",".join(_signature_dtypes(signature))
                lib.numtrace_annotate_kernel(name.encode(), dtypes.encode())
            if name:
                _provenance_module().announce_kernel_ops(lib, name)
        except Exception:  # never disturb the job
            pass

    kernel_cls.__init__ = init
    kernel_cls._numtrace_hooked = True


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Calls install(lib, module) right after `module_name` is first imported.

    Wraps the module's own loader, so the hook goes in before any user code
    can use the module; removes itself after the one import it waits for.
    """

    def __init__(self, module_name, install, lib):
        self._name, self._install, self._lib = module_name, install, lib

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self._name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader, install, lib = spec.loader, self._install, self._lib

        class _Loader(importlib.abc.Loader):
            def create_module(self, s):
                return loader.create_module(s)

            def exec_module(self, module):
                loader.exec_module(module)
                try:
                    install(lib, module)
                except Exception:  # never disturb the job
                    pass

        spec.loader = _Loader()
        return spec


def _optimizer_step_count(optimizer):
    """How many steps `optimizer` has taken, counting those before a checkpoint
    it was loaded from: the `step` its state keeps per parameter (Adam, AdamW,
    Adagrad, RMSprop, ...; SGD keeps none). None where it keeps none, or where
    reading it would touch the device (a step tensor on a GPU: a copy and a
    synchronisation, invalid during CUDA graph capture). Reads only: state is
    a defaultdict, so .get() - indexing would add an entry to the job's state."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p)
            step = state.get("step") if state else None
            if step is None:
                continue
            if getattr(getattr(step, "device", None), "type", "cpu") != "cpu":
                return None
            return int(step)
    return None


def _install_step_hook(lib, optimizer_module):
    register = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    if register is None:
        return
    mark_to = getattr(lib, "numtrace_mark_step_to", None)  # an older libnumtrace has only numtrace_mark_step
    if mark_to is not None:
        mark_to.argtypes = [ctypes.c_longlong]
        mark_to.restype = ctypes.c_int
    numbered = [False]  # the count is read at the first step only: later steps follow it one by one

    def after_step(optimizer=None, *args, **kwargs):
        # The job's own step number for the step that begins: after a resume
        # from a checkpoint, the optimizer's count goes on from where it was
        # saved, so the steps are numbered as in the run that saved it.
        count = None
        if mark_to is not None and not numbered[0]:
            numbered[0] = True
            try:
                count = _optimizer_step_count(optimizer)
            except Exception:  # never disturb the job
                count = None
        if count is not None:
            mark_to(count)
        else:
            lib.numtrace_mark_step()
        if _provenance_after_step is not None:
            _provenance_after_step(count)
        if _tensor_map_after_step is not None:
            _tensor_map_after_step()
        if _environment_after_step is not None:
            _environment_after_step()

    register(after_step)


def _provenance_module():
    return _hooks_module("numtrace_provenance")


def _install_provenance(lib, torch_module):
    global _provenance, _provenance_after_step
    prov = _provenance_module().install(lib, torch_module)
    if prov is None:
        return
    # Not wrapped in torch.compiler.disable: that would import torch._dynamo
    # (1.6 s) into every job. When optimizer.step() is compiled, the mark
    # before this call is a graph break already and the call runs eagerly
    # (checked by test/scripts/torch: steps counted, no recompile).
    after = prov.after_step
    _provenance, _provenance_after_step = prov, after


_tensor_map_after_step = None
_environment_after_step = None
_hook_modules = {}


def _hooks_module(name):
    """scripts/hooks/<name>.py beside this file, loaded once (not via sys.path: ours, whatever the job has)."""
    module = _hook_modules.get(name)
    if module is None:
        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location(name, os.path.join(here, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _hook_modules[name] = module
    return module


def _install_tensor_map(lib, torch_module):
    global _tensor_map_after_step
    tmap = _hooks_module("numtrace_tensor_map").install(lib, torch_module)
    if tmap is not None:
        _tensor_map_after_step = tmap.after_step


def _install_environment(lib, torch_module):
    global _environment_after_step
    env = _hooks_module("numtrace_environment").install(lib, torch_module)
    if env is not None:
        _environment_after_step = env.after_step


def _install_torch(lib, torch_module):
    """The torch installers, each on its own: one failing leaves the others in."""
    for install in (_install_provenance, _install_tensor_map, _install_environment):
        try:
            install(lib, torch_module)
        except Exception:  # never disturb the job
            pass


def _chain_other_sitecustomize():
    """Run the sitecustomize we shadow - a module or a package - as Python would.

    The next `sitecustomize` on sys.path after our folder is found by Python's
    own path finder (so a package, a .pyc or an extension is found like a
    .py), executed under its own name and left as sys.modules["sitecustomize"],
    so its relative imports and a later `import sitecustomize` see it. An
    error in it is reported in site.py's words and does not stop the job.
    """
    import importlib.machinery
    here = os.path.dirname(os.path.abspath(__file__))
    others = [e for e in sys.path if e and os.path.abspath(e) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    ours = sys.modules.get("sitecustomize")
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        sys.modules["sitecustomize"] = ours
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                             "%s: %s\n" % (err.__class__.__name__, err))


# (module, installer): installer(lib, module) runs right after the module's
# first import (or at once if it is already imported).
_HOOKS = (("torch.optim.optimizer", _install_step_hook),
          ("torch", _install_torch),
          ("triton.compiler.compiler", _install_triton_hook))
try:  # no measurement while autotuners time (best effort, like every hook)
    _HOOKS += _hooks_module("numtrace_bench_pause").HOOKS
except Exception:
    pass


def _main():
    _chain_other_sitecustomize()
    lib = _load_lib()
    if lib is None:
        return
    for name, install in _HOOKS:
        if name in sys.modules:
            install(lib, sys.modules[name])
        else:
            sys.meta_path.insert(0, _ImportWatcher(name, install, lib))


_main()
