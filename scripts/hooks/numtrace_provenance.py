"""numtrace provenance hooks: where in the model each captured kernel comes from.

Loaded by sitecustomize.py once torch is imported. Announces to libnumtrace,
per thread, the module path (PyTorch FQN, as named_modules() gives it from the
root module), the ATen operator and the phase (forward, backward, optimizer)
current when a kernel is launched; the shim stamps each captured launch with
them (trace fields scope, op, phase). No edit to the job.

  * module scope: global module forward pre/post hooks. In backward, the scope
    of each op is the module whose forward created the autograd node being
    run (recorded when the module's forward returns), so no backward module
    hook is registered (a global full backward hook would wrap every
    module's outputs and can break in-place ops).
  * op: a TorchDispatchMode entered for the captured step only, and only in a
    job that has compiled nothing (a dispatch mode active around compiled
    code could make it run differently). Under torch.compile the op of an
    Inductor kernel comes from its name instead (descriptive names list the
    ATen ops it was generated from): see announce_kernel_ops().
  * operator level (NUMTRACE_LEVEL=ops, `numtrace run --ops`): the same
    dispatch mode also hands every op's tensors to libnumtrace
    (numtrace_op_before/after; OpMeasure below), which measures them and
    writes one record per op - no CUDA needed. Not in compiled code (the mode
    stays out of a job that compiled anything; one stderr line says so).
    With --watch every step is armed (numtrace_step_captured answers 2) and
    libnumtrace digests each op of the steps not captured in full.
  * phase: backward while autograd runs a graph task, optimizer inside
    optimizer.step(), forward otherwise; a module forward that runs during
    backward (activation checkpointing's recompute) is phase backward and
    logged as `recompute`.

Armed only for captured steps: numtrace_step_captured() answers from the
configuration before CUDA starts; outside captured steps each module hook
returns after two checks (is_compiling, armed). Hooks are registered once at
start and never removed (Dynamo may guard on hook dictionaries). Every hook
is best effort: an exception inside one is reported once on stderr and the
job goes on unchanged.

NUMTRACE_HOOKS_LOG=FILE appends one line per announced event, after a line
saying which run and process they come from:
  # run pid=4242 label=run1 output=/tmp/hunt/run1
  step=2 phase=forward scope=layers.0.fc op=-
  step=2 phase=forward scope=layers.0.fc op=aten::addmm src=train.py:31
(src: the innermost frame outside torch, the standard library and these hooks)
"""
import ctypes
import os
import re
import stat
import sys
import threading

# Wrapper modules that add a component to named_modules() but not to the
# model's structure (FSDP1, activation checkpointing, torch.compile).
_WRAPPER_NAMES = {"_fsdp_wrapped_module", "_checkpoint_wrapped_module", "_orig_mod"}
# Nodes walked per module forward when mapping autograd nodes to modules.
_MAX_NODES_PER_MODULE = 20000
# Inductor kernel names: triton_<kind>_fused_<op>_<op>..._<n>.
_INDUCTOR_NAME = re.compile(r"^triton_(?:poi|red|per|tem|for|spl|mix|unk)_fused_(.+?)_\d+$")


def clean_fqn(name):
    """Drops wrapper components: 'layers.0._checkpoint_wrapped_module.attn' -> 'layers.0.attn'."""
    if not name:
        return name
    return ".".join(p for p in name.split(".") if p not in _WRAPPER_NAMES)


def inductor_ops(kernel_name, is_op=None):
    """'triton_poi_fused_addmm_relu_0' -> 'aten::addmm+aten::relu', or None.

    Inductor's default descriptive names (config.triton.descriptive_names =
    'original_aten') join the names of the original ATen ops it fused with
    '_', which op names contain too (_log_softmax, native_layer_norm): with
    `is_op` (name -> bool, e.g. "is an aten op") the longest run of parts
    that is an op wins; without it, or where nothing matches, each part is
    taken as one op. What the name says, not more.
    """
    m = _INDUCTOR_NAME.match(kernel_name or "")
    if not m:
        return None
    parts = m.group(1).split("_")
    ops, i = [], 0
    while i < len(parts):
        j = len(parts)
        while is_op is not None and j > i + 1 and not is_op("_".join(parts[i:j])):
            j -= 1
        if is_op is None or not is_op("_".join(parts[i:j])):
            j = i + 1
        name = "_".join(parts[i:j])
        if name:
            ops.append("aten::" + name)
        i = j
    return "+".join(ops) or None


def _open_log(path):
    """Appends to a regular file only: a fifo or device never blocks the job (O_NONBLOCK), a directory fails."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("%s is not a regular file" % path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", buffering=1, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def _encode(text):
    return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)


# Longest scope, op or src the shim keeps, in bytes (common/format/provenance.h,
# kProvenanceMaxBytes): the log shows what the kernels will be stamped with.
_MAX_BYTES = 512
# Characters that reorder or break a line although they print: the bidi
# controls and the line/paragraph separators (common/text/terminal_safe.cc).
_REORDERS = frozenset([0x061C, 0x200E, 0x200F] + list(range(0x2028, 0x202F)) + list(range(0x2066, 0x206A)))


def _printable(text):
    """For the log: one line whatever the name holds, by the rule numtrace's printed
    lines follow (common/text/terminal_safe.h): ESC -> ^[, other controls, C1 and
    bidi controls, line separators and bytes that are not UTF-8 -> \\xNN a byte;
    a space too is \\x20 (it separates the fields). Cut at 512 bytes like the trace."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > _MAX_BYTES:
        n = _MAX_BYTES
        while n > 0 and (raw[n] & 0xC0) == 0x80:
            n -= 1
        raw = raw[:n]
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        cp = ord(ch)
        if cp == 0x1B:
            out.append("^[")
        elif cp <= 0x20 or cp == 0x7F:
            out.append("\\x%02x" % cp)
        elif 0xDC80 <= cp <= 0xDCFF:  # a byte that was not UTF-8
            out.append("\\x%02x" % (cp - 0xDC00))
        elif 0x80 <= cp < 0xA0 or cp in _REORDERS or 0xD800 <= cp < 0xE000:
            out.append("".join("\\x%02x" % b for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return "".join(out)


class Provenance:
    def __init__(self, lib, torch):
        self._torch = torch
        self._lib = lib
        self._api = lib is not None and all(
            hasattr(lib, n) for n in ("numtrace_scope_push", "numtrace_scope_pop", "numtrace_op_push",
                                      "numtrace_op_pop", "numtrace_set_phase", "numtrace_step_captured"))
        if self._api:
            lib.numtrace_scope_push.argtypes = [ctypes.c_char_p]
            lib.numtrace_op_push.argtypes = [ctypes.c_char_p]
            lib.numtrace_set_phase.argtypes = [ctypes.c_char_p]
            lib.numtrace_step_captured.argtypes = [ctypes.c_longlong]
        self._set_src = getattr(lib, "numtrace_set_src", None) if self._api else None
        if self._set_src is not None:
            self._set_src.argtypes = [ctypes.c_char_p]
        # Frames in these directories are the framework's, not user code.
        self._framework_dirs = tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (
            getattr(torch, "__file__", None) or __file__, os.__file__, __file__))
        self._user_code = {}     # code object -> is user code
        self._log_path = os.environ.get("NUMTRACE_HOOKS_LOG") or None
        self._log_file = None
        self._log_pid = None     # the process whose run line the log has last
        self._log_lock = threading.Lock()
        self._tls = threading.local()
        self._failed = set()
        self._names = {}         # id(root) -> {id(module): fqn}, rebuilt per captured step
        self._known = {}         # id(module) -> (fqn, its root's names) for modules below a root
        self._node_scope = {}    # autograd node -> fqn of the module whose forward made it
        self._mode = None
        # Operator level (NUMTRACE_LEVEL=ops): the dispatch mode also measures
        # every op's tensors (OpMeasure). numtrace_op_level() starts numtrace
        # without CUDA, so it is asked here, when torch is imported.
        self.ops = None
        op_level = getattr(lib, "numtrace_op_level", None) if self._api else None
        try:
            if op_level is not None and op_level() == 1:
                self.ops = OpMeasure(lib, torch, self)
        except Exception as e:
            self._fail("operator level", e)
        self.step = 0
        self.armed = False
        is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
        self._is_compiling = is_compiling or (lambda: False)
        self._graph_task_id = getattr(torch._C, "_current_graph_task_id", lambda: -1)
        self._autograd_node = getattr(torch._C, "_current_autograd_node", lambda: None)
        self._set_armed(self._captured(0))

    # ---- arming -------------------------------------------------------------
    def _captured(self, step):
        if not self._api:
            return False
        try:
            return self._lib.numtrace_step_captured(step) in (1, 2)
        except Exception as e:  # never disturb the job
            self._fail("numtrace_step_captured", e)
            return False

    def _set_armed(self, armed):
        if armed == self.armed:
            return
        self.armed = armed
        self._names.clear()
        self._known.clear()
        self._node_scope.clear()
        if armed:
            self._enter_mode()
        else:
            self._exit_mode()

    def _jit_used(self):
        dynamo = sys.modules.get("torch._dynamo.utils")
        if dynamo is None:
            return False
        try:
            return dynamo.counters["frames"]["ok"] > 0 or dynamo.counters["stats"]["unique_graphs"] > 0
        except Exception:
            return True  # cannot tell: stay out of compiled code's way

    def _enter_mode(self):
        if self._jit_used():
            if self.ops is not None:
                self.ops.say_compiled(self.step)
            return
        try:
            self._mode = _make_mode(self)
            self._mode.__enter__()
        except Exception as e:
            self._mode = None
            self._fail("dispatch mode", e)

    def _exit_mode(self):
        mode, self._mode = self._mode, None
        if mode is not None:
            try:
                mode.__exit__(None, None, None)
            except Exception as e:
                self._fail("dispatch mode exit", e)

    # ---- per-thread state ---------------------------------------------------
    def _state(self):
        tls = self._tls
        if not hasattr(tls, "stack"):
            tls.stack = []      # (id(module), fqn) of the modules whose forward runs
            tls.phase = None    # the phase last announced on this thread
            tls.forward_seen = False  # a module forward ran in this step (loss ops after it are forward)
        return tls

    def _phase(self, tls, default):
        phase = "backward" if self._graph_task_id() != -1 else default
        if phase != tls.phase:
            tls.phase = phase
            self._lib.numtrace_set_phase(phase.encode())
        return phase

    def _log(self, phase, scope, op, extra=""):
        if self._log_path is None:
            return
        line = "step=%d phase=%s scope=%s op=%s%s\n" % (
            self.step, phase, "-" if scope is None else (_printable(scope) or "(root)"),
            "-" if op is None else _printable(op), extra)
        with self._log_lock:
            try:
                if self._log_file is None:
                    self._log_file = _open_log(self._log_path)
                if self._log_pid != os.getpid():
                    # Which run and process the lines below come from: several
                    # runs append to one log (numtrace twice: run1, run2 and the
                    # step captures), a forked child too.
                    self._log_pid = os.getpid()
                    self._log_file.write("# run pid=%d label=%s output=%s\n" % (
                        self._log_pid, _printable(os.environ.get("NUMTRACE_LABEL") or "-"),
                        _printable(os.environ.get("NUMTRACE_OUTPUT_DIR") or "-")))
                self._log_file.write(line)
            except OSError as e:
                self._log_path = None
                self._fail("NUMTRACE_HOOKS_LOG", e)

    def _fail(self, where, error):
        if where in self._failed:
            return
        self._failed.add(where)
        try:
            sys.stderr.write("numtrace hooks: %s failed (%s: %s); the job goes on, its provenance may be "
                             "incomplete\n" % (where, type(error).__name__, str(error).splitlines()[0][:200]
                                               if str(error) else ""))
        except Exception:
            pass

    # ---- module hooks -------------------------------------------------------
    def _fqn(self, module, stack):
        if not stack:
            # A module named under an earlier root in this step (activation
            # checkpointing's recompute calls a block's forward from backward):
            # keep its name under that root.
            known = self._known.get(id(module))
            if known is not None:
                self._tls.root = known[1]
                return known[0]
            names = self._names.get(id(module))
            if names is None:
                names = {id(m): clean_fqn(n) for n, m in module.named_modules(remove_duplicate=False)}
                self._names[id(module)] = names
                for mid, n in names.items():
                    if n:
                        self._known.setdefault(mid, (n, names))
            self._tls.root = names
            return ""
        names = getattr(self._tls, "root", None) or {}
        name = names.get(id(module))
        if name is None:  # not under the root's named_modules (made on the fly)
            parent = stack[-1][1]
            name = (parent + "." if parent else "") + type(module).__name__
        return name

    def forward_pre(self, module, args):
        if self._is_compiling():
            return
        if not self.armed:
            return
        try:
            tls = self._state()
            fqn = self._fqn(module, tls.stack)
            tls.stack.append((id(module), fqn))
            tls.forward_seen = True
            self._lib.numtrace_scope_push(_encode(fqn))
            recompute = self._graph_task_id() != -1
            phase = self._phase(tls, "forward")
            self._log(phase, fqn, None, " recompute" if recompute else "")
        except Exception as e:
            self._fail("module forward pre-hook", e)

    def forward_post(self, module, args, output):
        if self._is_compiling():
            return
        if not self.armed:
            return
        try:
            tls = self._state()
            if not tls.stack or tls.stack[-1][0] != id(module):
                return  # armed while this forward was running: nothing was pushed for it
            _, fqn = tls.stack.pop()
            self._lib.numtrace_scope_pop()
            if self._graph_task_id() == -1:
                self._map_nodes(output, fqn)
        except Exception as e:
            self._fail("module forward hook", e)

    def _map_nodes(self, output, fqn):
        """Autograd nodes this forward created -> its fqn (inner modules mapped theirs first)."""
        todo = []
        stack = [output]
        while stack and len(todo) < 64:
            o = stack.pop()
            if isinstance(o, (list, tuple)):
                stack.extend(o)
            elif isinstance(o, dict):
                stack.extend(o.values())
            else:
                fn = getattr(o, "grad_fn", None)
                if fn is not None:
                    todo.append(fn)
        seen = 0
        scope = self._node_scope
        while todo and seen < _MAX_NODES_PER_MODULE:
            node = todo.pop()
            if node is None or node in scope:
                continue
            scope[node] = fqn
            seen += 1
            for nxt, _ in getattr(node, "next_functions", ()):
                if nxt is not None and nxt not in scope:
                    todo.append(nxt)

    # ---- optimizer hooks ----------------------------------------------------
    def optimizer_pre(self, optimizer, args, kwargs):
        if self._is_compiling() or not self.armed:
            return
        try:
            tls = self._state()
            tls.phase = "optimizer"
            self._lib.numtrace_set_phase(b"optimizer")
            self._lib.numtrace_scope_push(b"")  # the optimizer updates the root's parameters
            tls.optimizer_scope = True
            self._log("optimizer", "", None)
        except Exception as e:
            self._fail("optimizer step pre-hook", e)

    def after_step(self, next_step=None):
        """After numtrace_mark_step(): the next step begins - numbered `next_step`
        where the mark said one (numtrace_mark_step_to), by the shim's rule:
        taken when it is ahead of the step that ends (StepTracker::Mark)."""
        try:
            tls = self._state()
            if getattr(tls, "optimizer_scope", False):
                tls.optimizer_scope = False
                self._lib.numtrace_scope_pop()
            tls.forward_seen = False
            if tls.phase is not None:
                tls.phase = None
                self._lib.numtrace_set_phase(b"")
            self.step = next_step if next_step is not None and next_step > self.step else self.step + 1
            self._node_scope.clear()  # this step's autograd graph is gone
            self._set_armed(self._captured(self.step))
        except Exception as e:
            self._fail("optimizer step hook", e)

    # ---- ops ----------------------------------------------------------------
    def op_enter(self, func):
        """Announces op `func`; returns what op_exit needs, or None."""
        tls = self._state()
        name = getattr(getattr(func, "_schema", None), "name", None) or str(func)
        in_backward = self._graph_task_id() != -1
        scope = None
        if in_backward and not tls.stack:
            node = self._autograd_node()
            scope = self._node_scope.get(node) if node is not None else None
            if scope is not None:
                self._lib.numtrace_scope_push(_encode(scope))
        elif tls.stack:
            scope = tls.stack[-1][1]
        default = "optimizer" if getattr(tls, "optimizer_scope", False) else "forward"
        if not tls.stack and not in_backward and default == "forward" and not tls.forward_seen:
            default = "other"  # before the model's forward: data loading, zeroing
        phase = self._phase(tls, default)
        self._announce_src(tls)
        self._lib.numtrace_op_push(_encode(name))
        src = getattr(tls, "src", "")
        self._log(phase, "" if default == "optimizer" and scope is None else scope, name,
                  " src=" + _printable(src) if src else "")
        return in_backward and not tls.stack and scope is not None

    def _src(self):
        """'file:line' of the innermost user-code frame, or ''."""
        frame = sys._getframe(1)
        known = self._user_code
        while frame is not None:
            code = frame.f_code
            user = known.get(code)
            if user is None:
                name = code.co_filename
                user = not name.startswith("<") and not os.path.abspath(name).startswith(self._framework_dirs)
                if len(known) < 100000:
                    known[code] = user
            if user:
                return "%s:%d" % (os.path.basename(code.co_filename), frame.f_lineno)
            frame = frame.f_back
        return ""

    def _announce_src(self, tls):
        if self._set_src is None:
            return
        src = self._src()
        if src != getattr(tls, "src", ""):
            tls.src = src
            self._set_src(_encode(src))

    def op_exit(self, pushed_scope):
        self._lib.numtrace_op_pop()
        if pushed_scope:
            self._lib.numtrace_scope_pop()

def announce_kernel_ops(lib, name):
    """A Triton kernel was compiled: tell numtrace the ops Inductor made it from."""
    fn = getattr(lib, "numtrace_annotate_kernel_ops", None)
    if fn is None:
        return
    torch = sys.modules.get("torch")
    aten = getattr(getattr(torch, "ops", None), "aten", None) if torch is not None else None
    ops = inductor_ops(name, (lambda n: hasattr(aten, n)) if aten is not None else None)
    if ops:
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        fn(_encode(name), _encode(ops))


class _Tensor(ctypes.Structure):
    """numtrace_tensor of shim/api/numtrace.h."""
    _fields_ = [("storage", ctypes.c_ulonglong), ("offset", ctypes.c_ulonglong), ("data", ctypes.c_ulonglong),
                ("shape", ctypes.POINTER(ctypes.c_longlong)), ("strides", ctypes.POINTER(ctypes.c_longlong)),
                ("ndim", ctypes.c_int), ("element_size", ctypes.c_int), ("dtype", ctypes.c_char_p),
                ("device", ctypes.c_char_p), ("arg", ctypes.c_int), ("written", ctypes.c_int)]


class OpMeasure:
    """Operator level: hands each op's tensors to numtrace_op_before/after.

    Tensors are numbered in schema order, a list argument's elements one by
    one, results after the arguments; an argument the schema marks written
    (in-place, out=) is measured before the call too. A result that is an
    argument written in place is not listed twice. Only pointers, shapes and
    strides cross: nothing is copied (except a non-contiguous CUDA tensor,
    copied on the current stream for the reduction kernels and dropped at
    once) and no tensor is kept after the op.
    """

    def __init__(self, lib, torch, prov):
        self._lib, self._torch, self._prov = lib, torch, prov
        lib.numtrace_op_before.argtypes = [ctypes.POINTER(_Tensor), ctypes.c_int, ctypes.c_ulonglong]
        lib.numtrace_op_before.restype = ctypes.c_longlong
        lib.numtrace_op_after.argtypes = [ctypes.c_longlong, ctypes.c_char_p, ctypes.POINTER(_Tensor),
                                          ctypes.c_int, ctypes.c_ulonglong]
        names = {"float64": b"f64", "float32": b"f32", "float16": b"f16", "bfloat16": b"bf16",
                 "float8_e4m3fn": b"f8e4m3", "float8_e5m2": b"f8e5m2", "int64": b"i64", "int32": b"i32",
                 "int16": b"i16", "int8": b"i8", "uint8": b"u8", "bool": b"bool"}
        self._dtypes = {getattr(torch, n): w for n, w in names.items() if hasattr(torch, n)}
        self._written = {}  # schema -> (written flags of the arguments, result aliases an argument it wrote)
        self._compiled_said = False

    def say_compiled(self, step):
        if self._compiled_said:
            return
        self._compiled_said = True
        try:
            sys.stderr.write("numtrace hooks: the job uses torch.compile: operator-level capture stays out of it "
                             "from step %d on (compiled code is not run under a dispatch mode; "
                             "docs/torch-hooks.md)\n" % step)
        except Exception:
            pass

    def _schema_info(self, func):
        info = self._written.get(func)
        if info is None:
            schema = func._schema
            args = [(a.name, bool(a.alias_info is not None and a.alias_info.is_write)) for a in schema.arguments]
            rets = [bool(r.alias_info is not None and r.alias_info.is_write) for r in schema.returns]
            info = (args, rets)
            self._written[func] = info
        return info

    def _flatten(self, value, out):
        t = self._torch
        if isinstance(value, t.Tensor):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                if isinstance(v, t.Tensor):
                    out.append(v)

    def _describe(self, tensor, arg, written, keep):
        d = _Tensor()
        d.arg, d.written = arg, 1 if written else 0
        es = tensor.element_size()
        d.element_size = es or 1
        d.dtype = self._dtypes.get(tensor.dtype, b"raw")
        device = tensor.device
        kind = device.type
        try:
            if kind not in ("cpu", "cuda") or tensor.layout is not self._torch.strided or tensor.is_quantized:
                raise TypeError("not a strided CPU/CUDA tensor")
            data = tensor.data_ptr()  # raises for a tensor without storage
            offset = tensor.storage_offset() * es
        except Exception:
            d.device = (kind + ("" if tensor.layout is self._torch.strided else " " + str(tensor.layout))).encode()
            return d, None
        d.device = b"cpu" if kind == "cpu" else ("cuda:%d" % (device.index or 0)).encode()
        d.storage, d.offset = data - offset, offset  # the storage's start, the view's place in it
        shape = tensor.shape
        nd = d.ndim = len(shape)
        if kind == "cuda" and not tensor.is_contiguous():
            copy = tensor.contiguous()
            keep.append(copy)
            d.data = copy.data_ptr()
            dims = (ctypes.c_longlong * max(1, nd))(*shape)
        else:
            d.data = data
            # Sizes then strides in one array: one ctypes object per tensor.
            dims = (ctypes.c_longlong * max(1, 2 * nd))(*shape, *tensor.stride())
            if nd:
                d.strides = ctypes.cast(ctypes.addressof(dims) + 8 * nd, ctypes.POINTER(ctypes.c_longlong))
        keep.append(dims)
        d.shape = dims
        return d, device

    def _call(self, tensors, keep):
        """(numtrace_tensor array, count, stream)."""
        descs, stream = [], 0
        for tensor, arg, written in tensors:
            d, device = self._describe(tensor, arg, written, keep)
            descs.append(d)
            if stream == 0 and device is not None and device.type == "cuda":
                stream = self._torch.cuda.current_stream(device).cuda_stream
        arr = (_Tensor * max(1, len(descs)))(*descs)
        keep.append(arr)
        return arr, len(descs), stream

    def before(self, func, args, kwargs):
        """Measures what the op may write; returns the state after() needs, or None."""
        arg_info, _ = self._schema_info(func)
        tensors = []
        for i, (name, written) in enumerate(arg_info):
            value = args[i] if i < len(args) else kwargs.get(name)
            found = []
            self._flatten(value, found)
            for t in found:
                tensors.append((t, len(tensors), written))
        keep = []
        arr, n, stream = self._call([x for x in tensors if x[2]], keep)
        token = self._lib.numtrace_op_before(arr, n, stream)
        if token < 0:
            return None
        return token, tensors

    # Operators whose results are uninitialised memory: their bytes differ
    # from run to run and mean nothing, so the results are not listed.
    _UNINITIALISED = frozenset(("aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty",
                                "aten::new_empty_strided", "aten::empty_permuted"))

    def after(self, state, func, out):
        token, tensors = state
        _, ret_info = self._schema_info(func)
        name = getattr(getattr(func, "_schema", None), "name", None) or str(func)
        results = []
        if out is not None and name not in self._UNINITIALISED:
            outs = out if isinstance(out, (list, tuple)) and len(ret_info) != 1 else (out,)
            for r, aliases_written in zip(outs, ret_info or [False] * len(outs)):
                if aliases_written:
                    continue  # the argument it wrote is listed already
                found = []
                self._flatten(r, found)
                results.extend(found)
        listed = tensors + [(t, len(tensors) + i, True) for i, t in enumerate(results)]
        keep = []
        try:
            arr, n, stream = self._call(listed, keep)
        except Exception:
            # The record must still be closed, or every later one waits for it.
            self._lib.numtrace_op_after(token, _encode(name), None, 0, 0)
            raise
        self._lib.numtrace_op_after(token, _encode(name), arr, n, stream)


def _make_mode(prov):
    from torch.utils._python_dispatch import TorchDispatchMode
    ops = prov.ops

    class _OpMode(TorchDispatchMode):
        """Announces each ATen op (and at operator level measures its tensors); never changes what runs."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            token = None
            try:
                token = prov.op_enter(func)
                entered = True
            except Exception as e:
                entered = False
                prov._fail("dispatch mode", e)
            measured = None
            if ops is not None:
                try:
                    measured = ops.before(func, args, kwargs)
                except Exception as e:
                    prov._fail("operator-level measurement", e)
            out = None
            try:
                out = func(*args, **kwargs)
                return out
            finally:
                if measured is not None:
                    try:
                        ops.after(measured, func, out)
                    except Exception as e:
                        prov._fail("operator-level measurement", e)
                if entered:
                    try:
                        prov.op_exit(token)
                    except Exception as e:
                        prov._fail("dispatch mode", e)

    return _OpMode()


def install(lib, torch):
    """Registers the hooks once; returns the Provenance (its after_step goes after each mark)."""
    prov = Provenance(lib, torch)
    if not prov._api:
        return None
    from torch.nn.modules import module as nn_module
    import torch.optim.optimizer as optim
    nn_module.register_module_forward_pre_hook(prov.forward_pre)
    nn_module.register_module_forward_hook(prov.forward_post, always_call=True)
    register_pre = getattr(optim, "register_optimizer_step_pre_hook", None)
    if register_pre is not None:
        register_pre(prov.optimizer_pre)
    return prov
