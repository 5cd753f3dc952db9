"""numtrace hooks: the framework's part of the trace's `environment` (docs/format.md).

Once torch is imported, every setting of torch that decides the numbers is read
and handed to numtrace_set_environment(key, value) as a string ("true", "tf32",
"2.9.0"). A job may change them later (torch.set_float32_matmul_precision in
the script, after the import), so they are read again when a captured step
starts and when it ends: the trace holds what the captured step saw (the shim
writes a value only when it changed). Nothing is imported that the job did not
import (Triton and Inductor are read only when already loaded), nothing is set,
and every read is guarded: a missing attribute leaves its key out.
"""
import ctypes
import sys
import warnings

# Inductor settings that change numbers (read when torch._inductor.config is loaded).
_INDUCTOR = ("emulate_precision_casts", "fallback_random", "max_autotune", "max_autotune_gemm",
             "coordinate_descent_tuning", "deterministic", "use_fast_math", "force_same_precision")


def _word(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _attr(obj, dotted):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _resolved(*values):
    """The first fp32_precision that is not 'none' (a backend inherits its parent's)."""
    for v in values:
        if v is not None and str(v) != "none":
            return str(v)
    return None


def collect(torch):
    """{key: value} for every key this torch can answer."""
    out = {}

    def put(key, read):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecation notes of old flags: not the job's business
                v = read()
            if v is not None:
                out[key] = _word(v)
        except Exception:  # an older or newer torch: the key stays absent
            pass

    put("python.version", lambda: sys.version.split()[0])
    put("torch.version", lambda: torch.__version__)
    put("torch.git", lambda: torch.version.git_version)
    put("torch.cuda", lambda: torch.version.cuda)
    put("torch.cudnn", lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)

    def nccl():
        v = torch._C._nccl_version()
        if isinstance(v, tuple):
            return ".".join(str(x) for x in v)
        if v >= 1 << 32:  # newer torch packs major << 32 | minor << 16 | patch
            return "%d.%d.%d" % (v >> 32, (v >> 16) & 0xFFFF, v & 0xFFFF)
        if v >= 10000:  # NCCL_VERSION_CODE since 2.9: X*10000 + Y*100 + Z
            return "%d.%d.%d" % (v // 10000, v % 10000 // 100, v % 100)
        return "%d.%d.%d" % (v // 1000, v % 1000 // 100, v % 100)
    put("torch.nccl", nccl if hasattr(torch._C, "_nccl_version") else (lambda: None))
    triton = sys.modules.get("triton")
    if triton is not None:
        put("triton.version", lambda: triton.__version__)

    put("torch.float32_matmul_precision", torch.get_float32_matmul_precision)
    matmul = lambda: torch.backends.cuda.matmul  # noqa: E731
    put("torch.matmul.allow_tf32", lambda: matmul().allow_tf32)
    put("torch.cudnn.allow_tf32", lambda: torch.backends.cudnn.allow_tf32)

    def generic():
        return getattr(torch.backends, "fp32_precision", None)

    def matmul_tf32():
        return "tf32" if matmul().allow_tf32 else "ieee"

    def cudnn_tf32():
        return "tf32" if torch.backends.cudnn.allow_tf32 else "ieee"
    if hasattr(matmul(), "fp32_precision"):
        put("torch.matmul.fp32_precision",
            lambda: _resolved(matmul().fp32_precision, generic(), matmul_tf32()))
    cudnn = getattr(torch.backends, "cudnn", None)
    if cudnn is not None and hasattr(getattr(cudnn, "conv", None), "fp32_precision"):
        put("torch.cudnn.conv.fp32_precision",
            lambda: _resolved(cudnn.conv.fp32_precision, getattr(cudnn, "fp32_precision", None), generic(),
                              cudnn_tf32()))
    put("torch.matmul.allow_fp16_reduced_precision_reduction",
        lambda: matmul().allow_fp16_reduced_precision_reduction)
    put("torch.matmul.allow_bf16_reduced_precision_reduction",
        lambda: matmul().allow_bf16_reduced_precision_reduction)

    def deterministic():
        if not torch.are_deterministic_algorithms_enabled():
            return "false"
        return "warn_only" if torch.is_deterministic_algorithms_warn_only_enabled() else "true"
    put("torch.deterministic_algorithms", deterministic)
    put("torch.fill_uninitialized_memory", lambda: _attr(torch, "utils.deterministic.fill_uninitialized_memory"))
    put("torch.cudnn.deterministic", lambda: torch.backends.cudnn.deterministic)
    put("torch.cudnn.benchmark", lambda: torch.backends.cudnn.benchmark)
    put("torch.cudnn.enabled", lambda: torch.backends.cudnn.enabled)
    put("torch.sdp.flash", lambda: torch.backends.cuda.flash_sdp_enabled())
    put("torch.sdp.mem_efficient", lambda: torch.backends.cuda.mem_efficient_sdp_enabled())
    put("torch.sdp.math", lambda: torch.backends.cuda.math_sdp_enabled())
    put("torch.sdp.cudnn", lambda: torch.backends.cuda.cudnn_sdp_enabled())

    def autocast():
        if not torch.is_autocast_enabled("cuda"):
            return "off"
        return str(torch.get_autocast_dtype("cuda")).replace("torch.", "")
    put("torch.autocast.cuda", autocast)
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        for name in _INDUCTOR:
            if hasattr(inductor, name):
                put("inductor." + name, lambda name=name: getattr(inductor, name))
    return out


class Environment:
    def __init__(self, lib, torch):
        self._lib, self._torch = lib, torch
        self._set = getattr(lib, "numtrace_set_environment", None)
        if self._set is not None:
            self._set.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self._captured = getattr(lib, "numtrace_step_captured", None)
        if self._captured is not None:
            self._captured.argtypes = [ctypes.c_longlong]
        self._sent = {}
        self.step = 0
        self.send()

    def send(self):
        if self._set is None:
            return
        for key, value in collect(self._torch).items():
            if self._sent.get(key) == value:
                continue
            self._sent[key] = value
            self._set(key.encode("utf-8", "surrogateescape"), value.encode("utf-8", "surrogateescape"))

    def _is_captured(self, step):
        try:
            return self._captured is not None and self._captured(step) in (1, 2)
        except Exception:  # never disturb the job
            return False

    def after_step(self):
        """After numtrace_mark_step(): step `self.step` ended, the next begins."""
        try:
            ended = self._is_captured(self.step)
            self.step += 1
            if ended or self._is_captured(self.step):
                self.send()
        except Exception:  # never disturb the job
            pass


def install(lib, torch):
    """Reads the settings once now (torch just imported); returns the Environment."""
    return Environment(lib, torch)
