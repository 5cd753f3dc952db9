"""numtrace tensor map, PyTorch side: PyTorch's caching allocator tells libnumtrace where tensors are.

Loaded by sitecustomize.py once torch is imported. Under PyTorch's default
(native) caching allocator one cudaMalloc segment holds many tensors, so the
shim cannot tell a tensor from its driver allocation. The allocator knows
each block it hands out: this module compiles a small bridge
(numtrace_alloc_bridge.cc) against the job's own torch, attaches it as an
allocator trace tracker that calls libnumtrace's numtrace_tensor_event()
directly from C++ for every block and segment, and reports the blocks that
already exist from torch.cuda.memory._snapshot(). The job keeps its
allocator: CUDA graph trees (torch.compile mode="reduce-overhead"),
torch.cuda.MemPool and symmetric memory refuse the cudaMallocAsync backend.

When: once, at the first global module forward pre-hook or optimizer step
after CUDA is initialized (the allocator has its per-device state only
then), and only if numtrace_tensor_map_wanted() says the shim captures and
wants the feed. Attach first, then snapshot: an event seen twice is
harmless, one missed is not.

Outcome, told to the shim exactly once with numtrace_tensor_map_status():
1 attached (torch version, blocks and segments from the snapshot, build
time), 2 not needed (the backend is not the caching allocator), 0 failed
(one line why: no compiler, the compiler's first error line, the attach
error). This module never prints and never raises into the job; the shim
writes the note and, for a failure, one stderr line.

The bridge is built in a private temporary directory, with the compiler's
output captured and its environment free of LD_PRELOAD and
CUDA_INJECTION64_PATH (the compiler must not load the shim), and the
directory is removed once the library is loaded: nothing stays on disk.
"""
import ctypes
import glob
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time

_BRIDGE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numtrace_alloc_bridge.cc")
# Whole budget for building the bridge (all attempts): it takes about 2 s
# (1.6-1.9 s measured against torch 2.15 on a 2-core machine); a loaded
# machine or a slow file system gets far more than that, a hung compiler not.
_BUILD_TIMEOUT_S = 120.0
# Standards tried in order: torch 2.15 headers need C++20, older torch
# builds with C++17 (and an old compiler may lack -std=c++20).
_STANDARDS = ("c++20", "c++17")
_COMPILERS = ("c++", "g++", "clang++")
# Compiler environment: what would load the shim into the compiler.
_ENV_DROPPED = ("LD_PRELOAD", "CUDA_INJECTION64_PATH")
# Snapshot block states that are live tensors (torch spells the second
# active_pending_free; its docstring says active_awaiting_free).
_LIVE_STATES = ("active_allocated", "active_pending_free", "active_awaiting_free")

ALLOC, FREE, SEGMENT_ALLOC, SEGMENT_FREE = 0, 1, 2, 3  # numtrace_tensor_event actions
ATTACHED, FAILED, NOT_NEEDED = 1, 0, 2                # numtrace_tensor_map_status states


class BridgeError(Exception):
    """A failure to build, load or attach the bridge; str() is the one-line reason."""


def _one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def snapshot_events(snapshot, default_device=0):
    """torch.cuda.memory._snapshot() -> [(action, device, address, bytes)].

    Every segment (SEGMENT_ALLOC, its total size), then every live block in
    it (ALLOC, its requested size). A block's address is its own "address"
    where the snapshot has one, else the running sum of block sizes from the
    segment's address (blocks tile their segment in order).
    """
    events = []
    for seg in (snapshot or {}).get("segments", ()):
        device = int(seg.get("device", default_device))
        base = int(seg["address"])
        events.append((SEGMENT_ALLOC, device, base, int(seg.get("total_size", 0))))
        offset = base
        for block in seg.get("blocks", ()):
            size = int(block.get("size", 0))
            address = int(block["address"]) if "address" in block else offset
            if block.get("state") in _LIVE_STATES:
                events.append((ALLOC, device, address, int(block.get("requested_size", size))))
            offset = address + size
    return events


def find_compiler(environ=None):
    """The C++ compiler to use: $CXX (a path or a name on PATH), else c++, g++, clang++ on PATH."""
    environ = os.environ if environ is None else environ
    path = environ.get("PATH", os.defpath)
    cxx = environ.get("CXX", "").strip()
    if cxx:
        # CXX may carry a launcher or flags ("ccache g++", "g++ -m64"): the first word is the program.
        try:
            words = shlex.split(cxx)
        except ValueError:
            words = cxx.split()
        found = shutil.which(words[0], path=path) if words else None
        if found is None:
            raise BridgeError("no C++ compiler to build the allocator bridge: CXX=%s is not an executable "
                              "(not found)" % _one_line(cxx, 120))
        return [found] + words[1:]
    for name in _COMPILERS:
        found = shutil.which(name, path=path)
        if found is not None:
            return [found]
    raise BridgeError("no C++ compiler to build the allocator bridge: CXX unset and none of %s on PATH"
                      % ", ".join(_COMPILERS))


def cuda_include_dir(torch, environ=None):
    """The directory holding cuda_runtime_api.h, or None (then the compiler's own paths are tried)."""
    environ = os.environ if environ is None else environ
    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    candidates = [os.path.join(environ[v], "include") for v in ("CUDA_HOME", "CUDA_PATH") if environ.get(v)]
    # The nvidia pip packages beside torch: CUDA 13 wheels (nvidia/cu13), CUDA
    # 12 wheels (nvidia/cuda_runtime); torch's own CUDA major first.
    major = str(getattr(getattr(torch, "version", None), "cuda", None) or "").split(".")[0]
    if major:
        candidates.append(os.path.join(site, "nvidia", "cu" + major, "include"))
    candidates += sorted(glob.glob(os.path.join(site, "nvidia", "cu[0-9]*", "include")), reverse=True)
    candidates += [os.path.join(site, "nvidia", "cuda_runtime", "include"), "/usr/local/cuda/include"]
    for c in candidates:
        if os.path.isfile(os.path.join(c, "cuda_runtime_api.h")):
            return c
    return None


def first_error(output):
    """The compiler's first error line, in its words: what went wrong.

    The compiler's own "error:" lines first, then the linker's ("ld: cannot
    find -lc10_cuda", which has no "error:" of its own), then collect2's
    summary, else the last line.
    """
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for wanted in (lambda l: "error:" in l and not l.startswith("collect2"),
                   lambda l: "ld: " in l or "ld.lld: " in l or "undefined reference" in l,
                   lambda l: "error" in l.lower()):
        for l in lines:
            if wanted(l):
                return l
    return lines[-1] if lines else "no output"


def _run_compiler(cmd, env, cwd, timeout):
    """Runs the compiler in its own session (a timeout kills cc1plus too); returns (rc, output)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        raise
    return proc.returncode, out.decode("utf-8", "replace")


def build_bridge(torch, defines=(), environ=None, timeout=_BUILD_TIMEOUT_S):
    """Compiles and loads the bridge against this torch; returns the ctypes library.

    The temporary directory is removed before returning, loaded or not.
    """
    environ = os.environ if environ is None else environ
    if not os.path.isfile(_BRIDGE_SOURCE):
        raise BridgeError("the allocator bridge's source %s is missing (a partial install?)" % _BRIDGE_SOURCE)
    cxx = find_compiler(environ)
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    libdir = os.path.join(torch_dir, "lib")
    flags = ["-O1", "-shared", "-fPIC", "-w",
             "-D_GLIBCXX_USE_CXX11_ABI=%d" % int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))),
             "-I" + os.path.join(torch_dir, "include")]
    cuda = cuda_include_dir(torch, environ)
    if cuda is not None:
        flags.append("-I" + cuda)
    flags += ["-D" + d for d in defines]
    env = {k: v for k, v in environ.items() if k not in _ENV_DROPPED}
    env["LC_ALL"] = "C"  # English diagnostics: first_error() looks for "error:"
    deadline = time.monotonic() + timeout
    tmp = tempfile.mkdtemp(prefix="numtrace-bridge-")
    try:
        out = os.path.join(tmp, "numtrace_alloc_bridge.so")
        errors = []  # (standard, first error line) per failed attempt
        for std in _STANDARDS:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            cmd = cxx + ["-std=" + std] + flags + [_BRIDGE_SOURCE, "-o", out, "-L" + libdir,
                                                   "-lc10_cuda", "-lc10", "-Wl,-rpath," + libdir]
            try:
                rc, output = _run_compiler(cmd, env, tmp, left)
            except subprocess.TimeoutExpired:
                raise BridgeError("building the allocator bridge took over %d s (%s)" % (timeout, cxx[0]))
            except OSError as e:
                raise BridgeError("could not run the C++ compiler %s: %s" % (cxx[0], e.strerror or e))
            if rc == 0 and os.path.isfile(out):
                try:
                    return ctypes.CDLL(out)
                except OSError as e:
                    raise BridgeError("could not load the allocator bridge: %s" % _one_line(e))
            errors.append((std, first_error(output)))
        # Both attempts' errors when they differ: an old compiler refuses
        # -std=c++20, then new headers fail under c++17; either alone misleads.
        said = errors[0][1] if errors else "no attempt finished in time"
        if len(errors) > 1 and errors[1][1] != errors[0][1]:
            said = "%s (with -std=%s: %s)" % (errors[0][1], errors[1][0], errors[1][1])
        raise BridgeError("the allocator bridge did not compile against torch %s (%s): %s"
                          % (getattr(torch, "__version__", "?"), os.path.basename(cxx[0]), _one_line(said)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def attach(bridge, event_fn_address):
    """numtrace_bridge_attach(); raises BridgeError with the C++ side's reason."""
    fn = bridge.numtrace_bridge_attach
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    fn.restype = ctypes.c_int
    error = ctypes.create_string_buffer(512)
    if fn(event_fn_address, error, len(error)) != 0:
        raise BridgeError("attaching the allocator trace tracker failed: %s"
                          % _one_line(error.value.decode("utf-8", "replace") or "no reason given"))


def build_check(torch):
    """For `numtrace doctor`: does the bridge build and load here? One line, 'ok: ...' or 'failed: ...'.

    Builds and loads the bridge without attaching it (nothing changes in the
    allocator), so it needs no GPU.
    """
    start = time.monotonic()
    try:
        build_bridge(torch)
    except BridgeError as e:
        return "failed: " + str(e)
    except Exception as e:
        return "failed: %s: %s" % (type(e).__name__, _one_line(e))
    return "ok: built against torch %s in %.1f s (%s)" % (
        getattr(torch, "__version__", "?"), time.monotonic() - start, os.path.basename(find_compiler()[0]))


class TensorMap:
    """Waits for CUDA, then attaches once; the hooks call poll()."""

    def __init__(self, lib, torch):
        self._lib = lib
        self._torch = torch
        self._lock = threading.Lock()
        self.pending = True      # plain flag: False once decided, for good
        self._bridge = None      # the loaded bridge, kept so it is never unloaded
        is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
        self._is_compiling = is_compiling or (lambda: False)
        lib.numtrace_tensor_map_wanted.restype = ctypes.c_int
        lib.numtrace_tensor_map_wanted.argtypes = []
        lib.numtrace_tensor_event.restype = ctypes.c_int
        lib.numtrace_tensor_event.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_ulonglong]
        lib.numtrace_tensor_map_status.restype = ctypes.c_int
        lib.numtrace_tensor_map_status.argtypes = [ctypes.c_int, ctypes.c_char_p]

    # ---- the two hook points ----------------------------------------------
    def forward_pre(self, module, args):
        self.after_step()

    def after_step(self):
        if self._is_compiling():
            return
        if not self.pending:
            return
        self.poll()

    def poll(self):
        try:
            if not self._torch.cuda.is_initialized():
                return
        except Exception:
            self.pending = False  # cannot tell: never try again
            return
        with self._lock:
            if not self.pending:
                return
            self.pending = False
        try:
            self._decide()
        except Exception:  # never disturb the job (_decide reports its own failures)
            pass

    # ---- once CUDA is up ----------------------------------------------------
    def _status(self, state, detail):
        try:
            self._lib.numtrace_tensor_map_status(state, _one_line(detail, 400).encode("utf-8", "replace"))
        except Exception:
            pass

    def _decide(self):
        try:
            if self._lib.numtrace_tensor_map_wanted() != 1:
                return  # numtrace does not capture here, or NUMTRACE_ALLOCATOR=async
        except Exception:
            return
        torch = self._torch
        try:
            backend = torch.cuda.memory.get_allocator_backend()
        except Exception as e:
            self._status(FAILED, "cannot tell the allocator backend: %s: %s" % (type(e).__name__, e))
            return
        if backend != "native":
            if backend == "cudaMallocAsync":
                why = "every tensor is its own driver allocation"
            else:
                why = "not PyTorch's caching allocator, so there is no allocator trace to follow"
            self._status(NOT_NEEDED, "allocator backend %s: %s" % (backend, why))
            return
        try:
            start = time.monotonic()
            bridge = build_bridge(torch)
            built = time.monotonic() - start
            event = self._lib.numtrace_tensor_event
            attach(bridge, ctypes.cast(event, ctypes.c_void_p).value)
            self._bridge = bridge
        except BridgeError as e:
            self._status(FAILED, str(e))
            return
        except Exception as e:
            self._status(FAILED, "allocator bridge: %s: %s" % (type(e).__name__, e))
            return
        try:
            snapshot = torch.cuda.memory._snapshot()
            events = snapshot_events(snapshot, torch.cuda.current_device())
            for action, device, address, size in events:
                event(action, device, address, size)
        except Exception as e:
            self._status(FAILED, "the tracker is attached, but the memory snapshot failed (%s: %s): tensors "
                         "allocated before now are not mapped" % (type(e).__name__, e))
            return
        blocks = sum(1 for e in events if e[0] == ALLOC)
        segments = len(events) - blocks
        self._status(ATTACHED, "torch %s; %d blocks in %d segments from the snapshot; bridge built in %.1f s"
                     % (getattr(torch, "__version__", "?"), blocks, segments, built))


def install(lib, torch):
    """Registers the forward pre-hook once; returns the TensorMap (its after_step goes after each mark), or None."""
    if lib is None or not all(hasattr(lib, n) for n in (
            "numtrace_tensor_map_wanted", "numtrace_tensor_event", "numtrace_tensor_map_status")):
        return None  # a libnumtrace without the tensor map
    tmap = TensorMap(lib, torch)
    from torch.nn.modules import module as nn_module
    # Registered once and never removed (Dynamo may guard on hook dicts).
    nn_module.register_module_forward_pre_hook(tmap.forward_pre)
    return tmap
